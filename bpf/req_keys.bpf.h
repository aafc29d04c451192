/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An event loop's open requests counted by the keys they are known by
 * (bpf/keyed.c): how many are open under a key, and which one when it is
 * alone. A call is tied to a request only by that lone one, so the count
 * must never say 1 while two are open, nor name one that is not. Requests
 * are added and dropped on several CPUs at once (haproxy's threads), with
 * no lock (tracing programs may not take a spin lock). Its own header so
 * that bpf/keyrace.bpf.c drives it from two CPUs with its windows widened
 * (tests/bpf/test_keyrace.c).
 *
 * An entry (struct claimd_req_owner) holds the count in the low half of its
 * word and a generation in the high half: the low 32 bits of the seq of the
 * request that inserted it. A hash map reuses an element as soon as it is
 * deleted, so a pointer a lookup gave may come to name another key's entry;
 * a change is a compare-and-swap against the word as read, which fails
 * there instead of counting a request under a key it does not carry.
 *
 * What holds, each against a race of two CPUs:
 *  - a count that fell to 0 never rises again (req_key_add): its entry is
 *    being deleted, and a request counted there would be deleted with it,
 *    open and uncounted, while a later request alone under the key would
 *    take its calls;
 *  - the owner a lone count names is cleared before its own part of the
 *    count is dropped (req_key_drop): a count of 1 never names a request
 *    on its way out while another is open;
 *  - the word is read before and after the owner (req_key_find): an owner
 *    read across a change is not used. x86 keeps loads in order, and the
 *    volatile loads keep the compiler from reordering them.
 * A request that cannot be counted (its key's entry dying through every
 * try, or the map full) is the caller's to handle: bpf/keyed.c makes it a
 * stray, and ties no call of its process by keys while one is open.
 */
#ifndef CLAIMD_REQ_KEYS_BPF_H
#define CLAIMD_REQ_KEYS_BPF_H

#ifndef EEXIST
#define EEXIST 17 /* the map's answer to BPF_NOEXIST for a key it holds */
#endif

/* A point where a race's window opens: a test object widens it (bpf/keyrace.bpf.c). */
#ifndef REQ_KEYS_WINDOW
#define REQ_KEYS_WINDOW() \
	do {              \
	} while (0)
#endif

/* Tries of req_key_add against other CPUs' changes before the request is left uncounted. */
#define REQ_KEY_TRIES 4

#define REQ_COUNT(word) ((__u32)(word))

/*
 * The open requests of event loops, by key: added when a request's head
 * ends, dropped when it is answered or its connection goes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CLAIMD_THREADS_MAX);
	__type(key, struct claimd_req_key);
	__type(value, struct claimd_req_owner);
} req_keys SEC(".maps");

/*
 * One more open request under k: the one on fd, seq, if it stays alone.
 * 0: counted; -1: not (the map full, or the key's entry changing through
 * every try).
 */
static __noinline int req_key_add(const struct claimd_req_key *k, __s32 fd, __u64 seq)
{
	struct claimd_req_owner v = { .word = (__u64)(__u32)seq << 32 | 1, .seq = seq, .fd = fd };
	struct claimd_req_owner *o;
	__u64 word;
	long err;
	int i;

	for (i = 0; i < REQ_KEY_TRIES; i++) {
		o = bpf_map_lookup_elem(&req_keys, k);
		if (!o) {
			err = bpf_map_update_elem(&req_keys, k, &v, BPF_NOEXIST);
			if (err != -EEXIST)
				return err ? -1 : 0;
			continue; /* another CPU inserted it meanwhile */
		}
		word = *(volatile __u64 *)&o->word;
		REQ_KEYS_WINDOW();
		/* At 0 the entry is dying: look again once it is gone. */
		if (REQ_COUNT(word) &&
		    __sync_val_compare_and_swap(&o->word, word, word + 1) == word)
			return 0;
	}
	return -1;
}

/* One open request under k fewer: the one seq names, counted by req_key_add. */
static __noinline int req_key_drop(const struct claimd_req_key *k, __u64 seq)
{
	struct claimd_req_owner *o = bpf_map_lookup_elem(&req_keys, k);

	/* Its part of the count keeps the entry: it is the one the request was counted in. */
	if (!o)
		return 0;
	if (*(volatile __u64 *)&o->seq == seq)
		__sync_val_compare_and_swap(&o->seq, seq, 0);
	if (REQ_COUNT(__sync_fetch_and_add(&o->word, -1)) > 1)
		return 0;
	REQ_KEYS_WINDOW();
	bpf_map_delete_elem(&req_keys, k);
	return 0;
}

/*
 * How many requests are open under k, as one look saw: 1 with *owner the
 * lone one's connection and seq (seq 0: that one is not known, as when the
 * one that inserted the entry left first). A count seen changing is 2:
 * more than one, for all the caller can tell.
 */
static __always_inline __u32 req_key_find(const struct claimd_req_key *k,
					  struct claimd_req_owner *owner)
{
	const struct claimd_req_owner *o = bpf_map_lookup_elem(&req_keys, k);
	__u64 word;

	owner->seq = 0;
	if (!o)
		return 0;
	word = *(volatile const __u64 *)&o->word;
	if (REQ_COUNT(word) != 1)
		return REQ_COUNT(word);
	owner->seq = *(volatile const __u64 *)&o->seq;
	owner->fd = *(volatile const __s32 *)&o->fd;
	REQ_KEYS_WINDOW();
	if (*(volatile const __u64 *)&o->word == word)
		return 1;
	owner->seq = 0;
	return 2;
}

#endif /* CLAIMD_REQ_KEYS_BPF_H */
