// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fragment of observer.bpf.c: where a connection's entry lives. In the slot
 * its name (process, fd) points at (conn_slots), when it found that slot
 * free at its first bytes; else in the conns table. A name is in one place
 * at a time: the slot is asked first, then the table. One exception: while
 * the slot's entry is being ended (CLAIMD_SOCK_TAG_ENDING, conn_end), the
 * name's next socket goes into the table, and is found there. Every
 * program finds, places and drops entries through these, never through
 * the maps.
 */

/* The slot key points at (held by key's connection or not). */
static __always_inline struct claimd_conn_slot *conn_slot_of(const struct claimd_conn_key *key)
{
	__u32 idx = claimd_conn_slot_index(key, conn_slots_mask);

	return bpf_map_lookup_elem(&conn_slots, &idx);
}

/* The connection named key: its entry, in its slot or the table; NULL if not followed. */
static __always_inline struct claimd_conn *conn_find(const struct claimd_conn_key *key)
{
	struct claimd_conn_slot *s = conn_slot_of(key);
	struct claimd_conn *next;

	if (s && s->owner == claimd_conn_slot_word(key)) {
		if (s->c.sk_tag != CLAIMD_SOCK_TAG_ENDING)
			return &s->c;
		/* Being ended: the name's next socket may be in the table meanwhile. */
		next = bpf_map_lookup_elem(&conns, key);
		return next ?: &s->c;
	}
	return bpf_map_lookup_elem(&conns, key);
}

/* How many times conn_put looks again at a slot another CPU is writing. */
#define CONN_SLOT_WAIT 64
#define EEXIST	       17 /* the table's answer to BPF_NOEXIST for a name it holds */

/*
 * The connection c (built elsewhere: conn_tmp, fresh) is followed under
 * key from now on: in key's slot if that is free, else in the table.
 * Returns its entry, or NULL when the table is full (counted). The slot is
 * held busy while the entry is written, so that no lookup finds half of
 * one. Callers put only a name conn_find did not find, but two CPUs can
 * move one socket's first bytes at once: the later one joins the entry
 * the first made for that socket (the same tag), wherever it is, rather
 * than write over an entry in use or leave a second one in the table
 * behind the slot, where nothing would find or drop it. An entry of
 * another socket under the name (one its fd named before) is written
 * over, unless another CPU is ending it (CLAIMD_SOCK_TAG_ENDING): then
 * the new one goes into the table, or, when that entry is the table's,
 * NULL, and the caller's bytes go unfollowed (conn_adopt). A new entry is
 * counted here, once.
 */
static __always_inline struct claimd_conn *conn_put(const struct claimd_conn_key *key,
						    const struct claimd_conn *c)
{
	struct claimd_conn_slot *s = conn_slot_of(key);
	__u64 word = claimd_conn_slot_word(key), was;
	struct claimd_conn *e;
	long err;
	int i;

	if (s) {
		was = __sync_val_compare_and_swap(&s->owner, 0, CLAIMD_CONN_SLOT_BUSY);
		if (!was) {
			__builtin_memcpy(&s->c, c, sizeof(*c));
			/* cmpxchg: a full barrier, the entry's stores before the name's. */
			__sync_val_compare_and_swap(&s->owner, CLAIMD_CONN_SLOT_BUSY, word);
			stat_inc(CLAIMD_ST_CONN_SLOTS);
			stat_inc(CLAIMD_ST_CONNS);
			return &s->c;
		}
		/* Busy: another CPU writes an entry there, maybe this name's. */
		for (i = 0; i < CONN_SLOT_WAIT && was == CLAIMD_CONN_SLOT_BUSY; i++)
			was = *(volatile __u64 *)&s->owner;
		if (was == word) {
			if (s->c.sk_tag == c->sk_tag)
				return &s->c;
			/*
			 * Written over under its name, not held busy: a lookup of the
			 * old socket meanwhile must still find the name, and tells
			 * the entry is not its socket's by the tag. Not one being
			 * ended: beside it, in the table.
			 */
			if (s->c.sk_tag != CLAIMD_SOCK_TAG_ENDING) {
				__builtin_memcpy(&s->c, c, sizeof(*c));
				stat_inc(CLAIMD_ST_CONNS);
				return &s->c;
			}
			stat_inc(CLAIMD_ST_CONN_BESIDE_END);
		}
	}
	err = bpf_map_update_elem(&conns, key, c, BPF_NOEXIST);
	if (err == -EEXIST) {
		e = bpf_map_lookup_elem(&conns, key);
		if (e && e->sk_tag == c->sk_tag)
			return e;
		if (e && e->sk_tag == CLAIMD_SOCK_TAG_ENDING)
			return NULL;
		err = bpf_map_update_elem(&conns, key, c, BPF_ANY);
	}
	if (err) {
		stat_inc(CLAIMD_ST_CONN_FULL);
		return NULL;
	}
	stat_inc(CLAIMD_ST_CONNS);
	return bpf_map_lookup_elem(&conns, key);
}

/*
 * Forgets the entry named key whose tag is tag, wherever it is (the slot's
 * being ended, the name's next socket may be beside it in the table). 0:
 * it was there, and now is not.
 */
static __always_inline int conn_drop(const struct claimd_conn_key *key, __u32 tag)
{
	struct claimd_conn_slot *s = conn_slot_of(key);
	__u64 word = claimd_conn_slot_word(key);
	struct claimd_conn *e;

	if (s && s->owner == word && s->c.sk_tag == tag) {
		if (__sync_val_compare_and_swap(&s->owner, word, 0) != word)
			return -1; /* another CPU dropped it first */
		stat_inc(CLAIMD_ST_CONN_SLOTS_FREED);
		return 0;
	}
	e = bpf_map_lookup_elem(&conns, key);
	if (!e || e->sk_tag != tag)
		return -1;
	return bpf_map_delete_elem(&conns, key);
}

/*
 * claimd gives back slots that processes gone held (their connections'
 * ends not seen): args[2i] a slot's index, args[2i + 1] the owner word
 * claimd read there (kernel/slots.c: it finds them in the mapped array,
 * in its own time, where a pass over every slot in here would hold the
 * CPU for milliseconds). A slot taken again since keeps its new owner.
 * Run with BPF_PROG_TEST_RUN; returns how many it gave back. Never
 * attached.
 */
SEC("raw_tp")
int claimd_forget_slots(struct bpf_raw_tracepoint_args *ctx)
{
	struct claimd_conn_slot *s;
	int i, freed = 0;
	__u32 idx;
	__u64 word;

	/* Unrolled: the context is read at constant offsets only. */
#pragma clang loop unroll(full)
	for (i = 0; i < CLAIMD_FORGET_SLOTS; i++) {
		idx = (__u32)ctx->args[2 * i];
		word = ctx->args[2 * i + 1];
		if (!word || word == CLAIMD_CONN_SLOT_BUSY)
			continue;
		s = bpf_map_lookup_elem(&conn_slots, &idx);
		if (!s || __sync_val_compare_and_swap(&s->owner, word, 0) != word)
			continue;
		stat_inc(CLAIMD_ST_CONN_SLOTS_FREED);
		freed++;
	}
	return freed;
}
