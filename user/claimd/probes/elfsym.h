/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the uprobe runtimes read of an ELF file: a function by its symbol
 * (the static table or the dynamic one), and where an address's bytes sit
 * in the file.
 */
#ifndef CLAIMD_PROBES_ELFSYM_H
#define CLAIMD_PROBES_ELFSYM_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

/* The section called name, its header in *sh; NULL when there is none. */
Elf_Scn *elfsym__section(Elf *elf, const char *name, GElf_Shdr *sh);

/* The bytes of the section called name (*size of them), NULL for none or SHT_NOBITS. */
const uint8_t *elfsym__section_bytes(Elf *elf, const char *name, size_t *size, GElf_Shdr *sh);

/* The defined function 'name' of elf into *sym: true when found. */
bool elfsym__function(Elf *elf, const char *name, GElf_Sym *sym);

/*
 * The non-virtual thunk of the C++ member function mangled (a "_Z" name)
 * into *sym: the copy a base class's vtable calls, given this as that
 * base, which lies *adjust bytes into the object ("_ZThn<adjust>_...").
 * True when the file has one.
 */
bool elfsym__thunk(Elf *elf, const char *mangled, GElf_Sym *sym, long *adjust);

/* The file offset of virtual address vaddr, through the loadable segments; 0: none. */
uint64_t elfsym__file_offset(Elf *elf, uint64_t vaddr);

/*
 * The ELF file at path, opened for reading (its descriptor in *fd): NULL
 * with errno set when it cannot be (ENOEXEC: no ELF file).
 */
Elf *elfsym__open(const char *path, int *fd);

/* Closes what elfsym__open opened (either may be NULL / -1), errno kept. */
void elfsym__close(Elf *elf, int fd);

/*
 * The first len bytes at most of function name's code into buf: how many
 * (0: no such function, or unreadable); its address in *addr if not NULL.
 */
size_t elfsym__function_bytes(Elf *elf, int fd, const char *name, uint8_t *buf, size_t len,
			      uint64_t *addr);

#endif
