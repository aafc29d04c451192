// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "probes/elfsym.h"

Elf_Scn *elfsym__section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

const uint8_t *elfsym__section_bytes(Elf *elf, const char *name, size_t *size, GElf_Shdr *sh)
{
	Elf_Scn *scn = elfsym__section(elf, name, sh);
	Elf_Data *d;

	if (!scn || sh->sh_type == SHT_NOBITS)
		return NULL;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return NULL;
	*size = d->d_size;
	return d->d_buf;
}

bool elfsym__function(Elf *elf, const char *name, GElf_Sym *sym)
{
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; data && i < n; i++) {
			const char *s;

			if (!gelf_getsym(data, i, sym) || GELF_ST_TYPE(sym->st_info) != STT_FUNC ||
			    !sym->st_value)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym->st_name);
			if (s && !strcmp(s, name))
				return true;
		}
	}
	return false;
}

uint64_t elfsym__file_offset(Elf *elf, uint64_t vaddr)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}
