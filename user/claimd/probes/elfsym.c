// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * The first defined function whose name matches (match(name, arg) true)
 * into *sym, its name into *name (the file's own string).
 */
static bool find_function(Elf *elf, bool (*match)(const char *, const void *), const void *arg,
			  GElf_Sym *sym, const char **name)
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
			if (s && match(s, arg)) {
				*name = s;
				return true;
			}
		}
	}
	return false;
}

static bool same_name(const char *s, const void *name)
{
	return !strcmp(s, name);
}

bool elfsym__function(Elf *elf, const char *name, GElf_Sym *sym)
{
	const char *found;

	return find_function(elf, same_name, name, sym, &found);
}

/* "_ZThn<digits>_" then the mangled name without its "_Z". */
static bool thunk_of(const char *s, const void *mangled)
{
	const char *rest = (const char *)mangled + 2;

	if (strncmp(s, "_ZThn", 5))
		return false;
	s += 5;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return *s == '_' && !strcmp(s + 1, rest);
}

bool elfsym__thunk(Elf *elf, const char *mangled, GElf_Sym *sym, long *adjust)
{
	const char *found;

	if (strncmp(mangled, "_Z", 2) || !find_function(elf, thunk_of, mangled, sym, &found))
		return false;
	*adjust = strtol(found + 5, NULL, 10);
	return true;
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

Elf *elfsym__open(const char *path, int *fd)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOTSUP;
		return NULL;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		return elf;
	if (elf)
		elf_end(elf);
	close(*fd);
	*fd = -1;
	errno = ENOEXEC;
	return NULL;
}

void elfsym__close(Elf *elf, int fd)
{
	int saved = errno;

	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	errno = saved;
}

size_t elfsym__function_bytes(Elf *elf, int fd, const char *name, uint8_t *buf, size_t len,
			      uint64_t *addr)
{
	GElf_Sym sym;
	uint64_t off;
	ssize_t got;

	if (!elfsym__function(elf, name, &sym))
		return 0;
	off = elfsym__file_offset(elf, sym.st_value);
	if (sym.st_size && sym.st_size < len)
		len = sym.st_size;
	got = off ? pread(fd, buf, len, (off_t)off) : -1;
	if (addr)
		*addr = sym.st_value;
	return got > 0 ? (size_t)got : 0;
}
