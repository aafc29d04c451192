// SPDX-License-Identifier: GPL-2.0
/* Checking ring-buffer records; see record.h. */
#include <stddef.h>

#include "kernel/record.h"

int record__check(const void *data, size_t size, const char **why)
{
	const struct claimd_rec_hdr *h = data;
	const struct claimd_ingress *in;
	size_t want;

	*why = NULL;
	if (!data || size < sizeof(*h)) {
		*why = "shorter than a record header";
		return 0;
	}
	if (h->version != CLAIMD_RECORD_VERSION) {
		*why = "record version differs from claimd's";
		return 0;
	}
	if (h->size != size) {
		*why = "size field disagrees with the record's length";
		return 0;
	}
	switch (h->type) {
	case CLAIMD_REC_INGRESS:
		if (size < offsetof(struct claimd_ingress, egress)) {
			*why = "ingress record too short";
			return 0;
		}
		in = data;
		if (in->n_egress > CLAIMD_EGRESS_MAX) {
			*why = "ingress record claims too many egress entries";
			return 0;
		}
		want = offsetof(struct claimd_ingress, egress) +
		       (size_t)in->n_egress * sizeof(struct claimd_egress);
		break;
	case CLAIMD_REC_EGRESS:
		want = sizeof(struct claimd_root_egress);
		break;
	case CLAIMD_REC_LISTEN:
		want = sizeof(struct claimd_listen);
		break;
	case CLAIMD_REC_EXIT:
	case CLAIMD_REC_UNREAD:
	case CLAIMD_REC_EXEC:
		want = sizeof(struct claimd_exit);
		break;
	case CLAIMD_REC_SOCKET_FILE:
		want = sizeof(struct claimd_socket_file);
		break;
	default:
		*why = "unknown record type";
		return 0;
	}
	if (size != want) {
		*why = "record length does not match its type";
		return 0;
	}
	return h->type;
}
