// SPDX-License-Identifier: GPL-2.0
/*
 * claimlab: the retry-storm rehearsal. Two commands:
 *   claimlab node [OPTIONS]   one lab service (see node.c)
 *   claimlab run [OPTIONS]    a topology of nodes under load (see run.c)
 * The driver starts its nodes by running this same program as 'node'.
 */
#include <stdio.h>
#include <string.h>

#include "lab.h"

const char *argp_program_version = "claimlab 0.1";

static void usage(FILE *f)
{
	fprintf(f, "usage: claimlab node [OPTIONS]   one lab service\n"
		   "       claimlab run [OPTIONS]    a topology of nodes under load\n"
		   "'claimlab COMMAND --help' tells a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* The command's name in its messages: "claimlab run: ..." */
	if (!strcmp(argv[1], "node")) {
		argv[1] = (char *)"claimlab node";
		return cmd_node(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "run")) {
		argv[1] = (char *)"claimlab run";
		return cmd_run(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		puts(argp_program_version);
		return 0;
	}
	log_set_prefix("claimlab");
	pr_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
