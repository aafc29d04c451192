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

/* The defined function 'name' of elf into *sym: true when found. */
bool elfsym__function(Elf *elf, const char *name, GElf_Sym *sym);

/* The file offset of virtual address vaddr, through the loadable segments; 0: none. */
uint64_t elfsym__file_offset(Elf *elf, uint64_t vaddr);

#endif
