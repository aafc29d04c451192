// SPDX-License-Identifier: GPL-2.0
/*
 * The skeleton-level tests' fixture; see kernel_fixture.h. The observer is
 * configured the way claimd configures it (user/claimd/kernel/observer.c), but
 * filtered to this process alone, with small tables and without the
 * uprobes, so nothing else on the host shows in what the tests read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "harness.h"
#include "kernel_fixture.h"
#include "kernel/service_slots.h"
#include "observer.skel.h"
#include "kernel/sock_marks.h"
#include "sockets.h"
#include "host/sysprobe.h"
#include "test_progs.h"
#include "kernel/slots.h"

/* proc.bpf.h's traced[] bit for "owns a socket we follow". */
#define PROC_TRACED 0x1

static int on_record(void *ctx, void *data, size_t size)
{
	struct kfix *f = ctx;

	if (f->n_recs >= KFIX_RECS_MAX) {
		f->lost_recs++;
		return 0;
	}
	memset(&f->recs[f->n_recs], 0, sizeof(f->recs[0]));
	memcpy(&f->recs[f->n_recs], data, size < sizeof(f->recs[0]) ? size : sizeof(f->recs[0]));
	f->n_recs++;
	return 0;
}

static void stats_read(struct kfix *f, __u64 out[CLAIMD_ST__COUNT])
{
	int fd = bpf_map__fd(f->skel->maps.stats);
	__u64 vals[f->ncpus];
	__u32 k;
	int c;

	for (k = 0; k < CLAIMD_ST__COUNT; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < f->ncpus; c++)
			out[k] += vals[c];
	}
}

bool kfix_open(struct kfix *f)
{
	return kfix_open_netns(f, 0);
}

bool kfix_open_netns(struct kfix *f, __u64 netns)
{
	struct observer_bpf *skel;
	struct bpf_program *prog;
	struct sysprobe probe;
	__u8 one = 1;
	int err;

	memset(f, 0, sizeof(*f));
	/* What claimd checks first: tracefs, where the tracepoints attach, is mounted if it is not. */
	if (!ASSERT_OK(sysprobe__run(&probe), "sysprobe: the host can run the observer"))
		return false;
	f->tgid = getpid();
	f->ncpus = libbpf_num_possible_cpus();
	f->recs = calloc(KFIX_RECS_MAX, sizeof(*f->recs));
	if (!ASSERT_OK_PTR(f->recs, "records"))
		return false;
	skel = f->skel = observer_bpf__open();
	if (!ASSERT_OK_PTR(skel, "observer_bpf__open"))
		goto fail;
	/* Only this process: the host's other traffic never shows. */
	skel->rodata->filter_flags = CLAIMD_FILTER_PID | (netns ? CLAIMD_FILTER_NETNS : 0);
	skel->rodata->filter_netns = netns;
	skel->rodata->fail_status_min = 500;
	skel->rodata->sock_head_untyped = probe.untyped_cast;
	/* One word per tgid: only this process's matters. */
	bpf_map__set_max_entries(skel->maps.traced, f->tgid + 1);
	/* 1,024 connections and 256 thread contexts, as claimd --conns 1024 --threads 256. */
	slots_size(skel->maps.conn_slots, skel->maps.conns, &skel->rodata->conn_slots_mask, 1024);
	slots_size(skel->maps.thread_slots, skel->maps.threads, &skel->rodata->thread_slots_mask,
		   256);
	bpf_map__set_max_entries(skel->maps.conn_ctx, 256);
	bpf_map__set_max_entries(skel->maps.thread_cur, 64);
	bpf_map__set_max_entries(skel->maps.events, 1u << 20);
	bpf_map__set_max_entries(skel->maps.edge_class, 64);
	/* The uprobes (TLS, explicit context) are not exercised here. */
	bpf_object__for_each_program(prog, skel->obj)
		if (bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE)
			bpf_program__set_autoload(prog, false);
	err = observer_bpf__load(skel);
	if (!ASSERT_OK(err, "observer_bpf__load"))
		goto fail;
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.pid_filter), &f->tgid, &one, BPF_ANY);
	if (!ASSERT_OK(err, "pid_filter"))
		goto fail;
	f->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, f, NULL);
	if (!ASSERT_OK_PTR(f->rb, "ring_buffer__new"))
		goto fail;
	f->slots_len = (size_t)CLAIM_SLOTS * sizeof(struct claim_slot);
	f->slots = mmap(NULL, f->slots_len, PROT_READ, MAP_SHARED, bpf_map__fd(skel->maps.verdicts),
			0);
	if (!ASSERT_TRUE(f->slots != MAP_FAILED, "mmap verdicts")) {
		f->slots = NULL;
		goto fail;
	}
	/* Every request's record, as while claimd traces. */
	kfix_records(f, true);
	err = observer_bpf__attach(skel);
	if (!ASSERT_OK(err, "observer_bpf__attach"))
		goto fail;
	err = io_attach(skel->progs.tp_io_x, f->io_links);
	if (!ASSERT_OK(err, "io_attach"))
		goto fail;
	return true;
fail:
	kfix_close(f);
	return false;
}

void kfix_close(struct kfix *f)
{
	if (f->slots)
		munmap((void *)f->slots, f->slots_len);
	ring_buffer__free(f->rb);
	io_detach(f->io_links);
	observer_bpf__destroy(f->skel);
	free(f->recs);
	memset(f, 0, sizeof(*f));
}

void kfix_drain(struct kfix *f)
{
	ring_buffer__consume(f->rb);
}

/* proc.bpf.h's mark on this process, as claimd's seeding sets it with traced[]. */
static void fixture_mark(struct kfix *f)
{
	int pfd = syscall(SYS_pidfd_open, f->tgid, 0);
	__u8 one = 1;

	if (pfd < 0)
		return;
	bpf_map_update_elem(bpf_map__fd(f->skel->maps.proc_mark), &pfd, &one, BPF_ANY);
	close(pfd);
}

/* Deletes every entry of the map (keys of at most 64 bytes). */
static void map_clear(struct bpf_map *map)
{
	int fd = bpf_map__fd(map);
	char key[64];

	if (bpf_map__key_size(map) > sizeof(key))
		return;
	while (!bpf_map_get_next_key(fd, NULL, key))
		if (bpf_map_delete_elem(fd, key))
			break;
}

/* Zeroes every element of a per-CPU array on every CPU. */
static void array_clear(struct bpf_map *map, int ncpus)
{
	size_t stride = (bpf_map__value_size(map) + 7) & ~(size_t)7;
	void *zero = calloc(ncpus, stride);
	__u32 i;

	for (i = 0; zero && i < bpf_map__max_entries(map); i++)
		bpf_map_update_elem(bpf_map__fd(map), &i, zero, BPF_ANY);
	free(zero);
}

void kfix_begin(struct kfix *f)
{
	__u32 flags = PROC_TRACED, tid = self_tid();

	kfix_drain(f);
	f->n_recs = 0;
	f->lost_recs = 0;
	map_clear(f->skel->maps.edge_class);
	/* Counts are kept by port: a port an earlier subtest's service had would add to them. */
	array_clear(f->skel->maps.service_counts, f->ncpus);
	map_clear(f->skel->maps.edge_counts);
	/* A multiplexing subtest leaves PROC_MUX, which silences every verdict after it. */
	bpf_map_update_elem(bpf_map__fd(f->skel->maps.traced), &f->tgid, &flags, BPF_ANY);
	fixture_mark(f);
	bpf_map_delete_elem(bpf_map__fd(f->skel->maps.threads), &tid);
	if (kfix_thread_slot(f, tid) == tid)
		kfix_thread_slot_set(f, tid, 0);
	stats_read(f, f->stats0);
}

static const struct kfix_rec *kfix_find(struct kfix *f, __u16 type, int port, int nth)
{
	int i;

	kfix_drain(f);
	for (i = 0; i < f->n_recs; i++) {
		const struct kfix_rec *r = &f->recs[i];
		int p = type == CLAIMD_REC_INGRESS  ? r->in.local.port
			: type == CLAIMD_REC_EGRESS ? r->eg.egress.callee.port
						    : r->listen.local.port;

		if (r->hdr.type == type && p == port && nth-- == 0)
			return r;
	}
	return NULL;
}

/* What was captured, for the log of a subtest whose record is missing. */
static void kfix_dump(struct kfix *f)
{
	int i;

	for (i = 0; i < f->n_recs; i++) {
		const struct kfix_rec *r = &f->recs[i];

		if (r->hdr.type == CLAIMD_REC_INGRESS)
			printf("  ingress tid %u local %u peer %u status %u n_egress %u flags %#x "
			       "verdict %u rule %u cause %u\n",
			       r->in.tid, r->in.local.port, r->in.peer.port, r->in.status,
			       r->in.n_egress, r->in.flags, r->in.verdict, r->in.rule, r->in.cause);
		else if (r->hdr.type == CLAIMD_REC_EGRESS)
			printf("  root egress tid %u callee %u status %u flags %#x\n", r->eg.tid,
			       r->eg.egress.callee.port, r->eg.egress.status, r->eg.egress.flags);
		else
			printf("  record type %u\n", r->hdr.type);
	}
}

const struct claimd_ingress *kfix_ingress(struct kfix *f, int port, int nth)
{
	const struct kfix_rec *r = kfix_find(f, CLAIMD_REC_INGRESS, port, nth);

	if (!r) {
		printf("no ingress %d on port %d in:\n", nth, port);
		kfix_dump(f);
	}

	return r ? &r->in : NULL;
}

int kfix_count_ingress(struct kfix *f, int port)
{
	int n = 0;

	while (kfix_find(f, CLAIMD_REC_INGRESS, port, n))
		n++;
	return n;
}

const struct claimd_egress *kfix_root(struct kfix *f, int port, int nth)
{
	const struct kfix_rec *r = kfix_find(f, CLAIMD_REC_EGRESS, port, nth);

	return r ? &r->eg.egress : NULL;
}

const struct claimd_listen *kfix_listen(struct kfix *f, int port, bool closed)
{
	const struct kfix_rec *r;
	int n;

	for (n = 0; (r = kfix_find(f, CLAIMD_REC_LISTEN, port, n)); n++)
		if (!r->listen.closed == !closed)
			return &r->listen;
	return NULL;
}

__u32 kfix_sock_marks(struct kfix *f, __u32 slot)
{
	/* A global of the program's (.bss), which the skeleton maps. */
	return __atomic_load_n(&f->skel->bss->sock_marks[slot % CLAIMD_SOCK_MARKS],
			       __ATOMIC_RELAXED);
}

int kfix_sock_mark(struct kfix *f, __u32 slot, int n)
{
	return sock_marks_change(f->skel->progs.claimd_mark, slot, n);
}

__u32 kfix_thread_slots(struct kfix *f)
{
	return f->skel->rodata->thread_slots_mask + 1;
}

__u32 kfix_thread_slot(struct kfix *f, __u32 tid)
{
	struct claimd_thread_slot s = { .tid = (__u32)-1 };
	__u32 idx = tid & f->skel->rodata->thread_slots_mask;

	bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.thread_slots), &idx, &s);
	return s.tid;
}

int kfix_thread_slot_set(struct kfix *f, __u32 tid, __u32 holder)
{
	static const struct claimd_thread_slot zero;
	struct claimd_thread_slot s = zero;
	__u32 idx = tid & f->skel->rodata->thread_slots_mask;

	s.tid = holder;
	return bpf_map_update_elem(bpf_map__fd(f->skel->maps.thread_slots), &idx, &s, BPF_ANY);
}

__u32 kfix_conn_slots(struct kfix *f)
{
	return f->skel->rodata->conn_slots_mask + 1;
}

static __u32 conn_slot_idx(struct kfix *f, int fd)
{
	struct claimd_conn_key key = { .tgid = f->tgid, .fd = fd };

	return claimd_conn_slot_index(&key, f->skel->rodata->conn_slots_mask);
}

__u64 kfix_conn_slot(struct kfix *f, int fd)
{
	struct claimd_conn_slot s = { .owner = (__u64)-1 };
	__u32 idx = conn_slot_idx(f, fd);

	bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.conn_slots), &idx, &s);
	return s.owner;
}

int kfix_conn_slot_set(struct kfix *f, int fd, __u64 owner)
{
	static const struct claimd_conn_slot zero;
	struct claimd_conn_slot s = zero;
	__u32 idx = conn_slot_idx(f, fd);

	s.owner = owner;
	return bpf_map_update_elem(bpf_map__fd(f->skel->maps.conn_slots), &idx, &s, BPF_ANY);
}

bool kfix_conn_in_table(struct kfix *f, int fd)
{
	struct claimd_conn_key key = { .tgid = f->tgid, .fd = fd };
	struct claimd_conn c;

	return !bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.conns), &key, &c);
}

int kfix_forget_slots(struct kfix *f, __u32 tgid)
{
	struct slots_view v;
	int n = slots_view_map(&v, f->skel->maps.conn_slots);

	if (n)
		return n;
	n = slots_forget(&v, f->skel->progs.claimd_forget_slots, &tgid, 1);
	slots_view_unmap(&v);
	return n;
}

__u64 kfix_stat(struct kfix *f, enum claimd_stat which)
{
	__u64 now[CLAIMD_ST__COUNT];

	stats_read(f, now);
	return now[which] - f->stats0[which];
}

static struct claimd_edge_key edge_key(const struct kfix *f, int service_port, int callee_port)
{
	struct claimd_edge_key key = {
		.tgid = f->tgid,
		.local_port = service_port,
		.callee_port = callee_port,
		.callee_addr = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 },
	};

	return key;
}

int kfix_set_class(struct kfix *f, int service_port, int callee_port, __u8 cls)
{
	struct claimd_edge_key key = edge_key(f, service_port, callee_port);

	return bpf_map_update_elem(bpf_map__fd(f->skel->maps.edge_class), &key, &cls, BPF_ANY);
}

static bool edge_counts_of(struct kfix *f, const struct claimd_edge_key *key,
			   struct claimd_edge_counts *out);

bool kfix_edge_counts(struct kfix *f, int service_port, int callee_port,
		      struct claimd_edge_counts *out)
{
	struct claimd_edge_key key = edge_key(f, service_port, callee_port);

	return edge_counts_of(f, &key, out);
}

bool kfix_proc_edge_counts(struct kfix *f, pid_t tgid, int service_port, int callee_port,
			   struct claimd_edge_counts *out)
{
	struct claimd_edge_key key = edge_key(f, service_port, callee_port);

	key.tgid = tgid;
	return edge_counts_of(f, &key, out);
}

bool kfix_root_counts(struct kfix *f, pid_t tgid, int callee_port, struct claimd_edge_counts *out)
{
	return kfix_proc_edge_counts(f, tgid, CLAIMD_ROOT_PORT, callee_port, out);
}

bool kfix_follow(struct kfix *f, pid_t tgid)
{
	__u32 one = 1, key = tgid;

	return !bpf_map_update_elem(bpf_map__fd(f->skel->maps.pid_filter), &key, &one, BPF_ANY);
}

static bool edge_counts_of(struct kfix *f, const struct claimd_edge_key *key,
			   struct claimd_edge_counts *out)
{
	struct claimd_edge_counts v[f->ncpus];
	int c;

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.edge_counts), key, v))
		return false;
	for (c = 0; c < f->ncpus; c++) {
		out->calls += v[c].calls;
		out->callee_failures += v[c].callee_failures;
		out->tied_failures += v[c].tied_failures;
		out->both_failed += v[c].both_failed;
		out->retries += v[c].retries;
	}
	return true;
}

bool kfix_service_counts(struct kfix *f, int service_port, struct claimd_service_counts *out)
{
	struct claimd_service_counts v[f->ncpus], scratch[f->ncpus];
	__u64 *o = (__u64 *)out;
	size_t i, words = sizeof(*out) / sizeof(__u64);
	int c;

	memset(out, 0, sizeof(*out));
	if (service_slots_read(bpf_map__fd(f->skel->maps.service_counts), f->ncpus,
			       claimd_service_owner(f->tgid, service_port), v, scratch) <= 0)
		return false;
	for (c = 0; c < f->ncpus; c++)
		for (i = 0; i < words; i++)
			o[i] += ((const __u64 *)&v[c])[i];
	return true;
}

/* Writes v (owner, requests) into service slot idx on every CPU. */
int kfix_service_slot_set(struct kfix *f, __u32 idx, __u64 owner, __u64 requests)
{
	struct claimd_service_counts v[f->ncpus];
	int cpu;

	memset(v, 0, sizeof(v));
	for (cpu = 0; cpu < f->ncpus; cpu++) {
		v[cpu].owner = owner;
		v[cpu].requests = requests;
	}
	return bpf_map_update_elem(bpf_map__fd(f->skel->maps.service_counts), &idx, v, BPF_ANY);
}

/* How many CPUs' copies of service slot idx have this owner and requests. */
int kfix_service_slot_cpus(struct kfix *f, __u32 idx, __u64 owner, __u64 requests)
{
	struct claimd_service_counts v[f->ncpus];
	int cpu, n = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.service_counts), &idx, v))
		return -1;
	for (cpu = 0; cpu < f->ncpus; cpu++)
		n += v[cpu].owner == owner && v[cpu].requests == requests;
	return n;
}

int kfix_service_forget(struct kfix *f, __u64 owner)
{
	return service_slots_forget(bpf_program__fd(f->skel->progs.claimd_forget_services), owner);
}

void kfix_records(struct kfix *f, bool on)
{
	f->skel->bss->records_on = on;
}

void kfix_count_epoch(struct kfix *f, __u32 epoch)
{
	f->skel->bss->count_epoch = epoch;
}

int kfix_dirty(struct kfix *f, __u32 epoch, int service_port, int callee_port, bool *overflow)
{
	struct claimd_edge_key want = edge_key(f, service_port, callee_port);
	struct claimd_service_key svc = { .tgid = f->tgid, .local_port = service_port };
	size_t es = (sizeof(struct claimd_dirty_edges) + 7) & ~(size_t)7;
	size_t ss = (sizeof(struct claimd_dirty_services) + 7) & ~(size_t)7;
	char *edges = calloc(f->ncpus, es), *svcs = calloc(f->ncpus, ss);
	__u32 slot = epoch & 1, i;
	int found = 0, c;

	*overflow = false;
	if (!edges || !svcs ||
	    bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.dirty_edges), &slot, edges) ||
	    bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.dirty_services), &slot, svcs)) {
		found = -1;
		goto out;
	}
	for (c = 0; c < f->ncpus; c++) {
		const struct claimd_dirty_edges *de = (const void *)(edges + c * es);
		const struct claimd_dirty_services *ds = (const void *)(svcs + c * ss);

		*overflow |= de->head.overflow || ds->head.overflow;
		for (i = 0; i < de->head.n && i < CLAIMD_DIRTY_MAX; i++)
			found += !memcmp(&de->keys[i], &want, sizeof(want)) ? 1 : 0;
		for (i = 0; i < ds->head.n && i < CLAIMD_DIRTY_MAX; i++)
			found += !memcmp(&ds->keys[i], &svc, sizeof(svc)) ? 0x100 : 0;
	}
out:
	free(edges);
	free(svcs);
	return found;
}

bool kfix_slot(struct kfix *f, struct claim_slot *out)
{
	const volatile struct claim_slot *s = &f->slots[claim_thread_index(self_tid())];
	int tries;

	for (tries = 0; tries < 1000; tries++) {
		__u32 seq = s->seq;

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(out, (const void *)s, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!(seq & 1) && seq == s->seq)
			return true;
	}
	return false;
}

/* The peer lets go of its connection: RST or FIN. */
static void peer_drop(struct peer *p, int *conn, bool reset)
{
	pthread_mutex_lock(&p->lock);
	p->conn = -1;
	pthread_mutex_unlock(&p->lock);
	if (reset)
		sock_reset(*conn);
	else
		close(*conn);
	*conn = -1;
}

static void *peer_main(void *arg)
{
	struct peer *p = arg;
	char buf[4096];
	int i, conn = -1;

	for (i = 0; i < p->n_steps; i++) {
		const struct peer_step *st = &p->steps[i];
		ssize_t got;

		if (conn < 0) {
			conn = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
			if (conn < 0)
				break;
			sock_deadline(conn);
			pthread_mutex_lock(&p->lock);
			p->conn = conn;
			pthread_mutex_unlock(&p->lock);
		}
		got = sock_recv_until(conn, buf, sizeof(buf), "\r\n\r\n", sizeof(buf));
		if (got <= 0 || !strstr(buf, "\r\n\r\n"))
			break;
		if (st->act == PEER_ANSWER && sock_send(conn, st->resp))
			break;
		if (st->act == PEER_HOLD) /* until the caller closes */
			sock_recv_until(conn, buf, sizeof(buf), NULL, sizeof(buf));
		if (st->act != PEER_ANSWER)
			peer_drop(p, &conn, st->act == PEER_RESET);
		__atomic_store_n(&p->done, i + 1, __ATOMIC_RELEASE);
	}
	if (conn >= 0)
		peer_drop(p, &conn, false);
	return NULL;
}

int sock_bound(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

bool peer_start_on(struct peer *p, int fd, const struct peer_step *steps, int n)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	memset(p, 0, sizeof(*p));
	p->conn = -1;
	pthread_mutex_init(&p->lock, NULL);
	p->lfd = fd;
	if (!ASSERT_GE(p->lfd, 0, "peer socket") || !ASSERT_LE(n, PEER_STEPS_MAX, "peer steps") ||
	    !ASSERT_OK(listen(p->lfd, 16), "peer listen") ||
	    !ASSERT_OK(getsockname(p->lfd, (struct sockaddr *)&sa, &len), "peer port"))
		return false;
	p->port = ntohs(sa.sin_port);
	memcpy(p->steps, steps, n * sizeof(*steps));
	p->n_steps = n;
	if (!ASSERT_OK(pthread_create(&p->th, NULL, peer_main, p), "peer thread"))
		return false;
	p->running = true;
	return true;
}

bool peer_start(struct peer *p, const struct peer_step *steps, int n)
{
	int port;

	return peer_start_on(p, sock_bound(&port), steps, n);
}

/* n steps answering resp, into steps (PEER_STEPS_MAX long); returns n. */
static int answer_steps(struct peer_step *steps, const char *resp, int n)
{
	int i;

	for (i = 0; i < n && i < PEER_STEPS_MAX; i++)
		steps[i] = (struct peer_step){ PEER_ANSWER, resp };
	return n;
}

bool peer_start_answers(struct peer *p, const char *resp, int n)
{
	struct peer_step steps[PEER_STEPS_MAX];

	return peer_start(p, steps, answer_steps(steps, resp, n));
}

void peer_stop(struct peer *p)
{
	if (p->running) {
		pthread_mutex_lock(&p->lock);
		if (p->conn >= 0)
			shutdown(p->conn, SHUT_RDWR);
		pthread_mutex_unlock(&p->lock);
		shutdown(p->lfd, SHUT_RDWR);
		pthread_join(p->th, NULL);
		p->running = false;
	}
	if (p->lfd >= 0)
		close(p->lfd);
	p->lfd = -1;
	pthread_mutex_destroy(&p->lock);
}

/* A client of the listener lfd and the socket accepted for it, into out. */
static bool svc_pair(int lfd, int port, struct svc *out)
{
	struct sockaddr_in client;
	socklen_t len = sizeof(client);

	out->port = port;
	out->afd = -1;
	out->cfd = sock_connect(port);
	if (!ASSERT_GE(out->cfd, 0, "client connect"))
		return false;
	out->afd = accept4(lfd, (struct sockaddr *)&client, &len, SOCK_CLOEXEC);
	if (!ASSERT_GE(out->afd, 0, "accept"))
		return false;
	sock_deadline(out->cfd);
	sock_deadline(out->afd);
	out->client_port = ntohs(client.sin_port);
	return true;
}

bool svc_connect(const struct svc *s, struct svc *out)
{
	out->lfd = -1;
	return svc_pair(s->lfd, s->port, out);
}

bool svc_open(struct svc *s)
{
	s->cfd = s->afd = -1;
	s->lfd = sock_listen(&s->port);
	if (!ASSERT_GE(s->lfd, 0, "service listen"))
		return false;
	return svc_pair(s->lfd, s->port, s);
}

bool kcase_open(struct kfix *f, struct kcase *c, const struct peer_step *steps, int n)
{
	c->s = (struct svc){ .lfd = -1, .cfd = -1, .afd = -1 };
	c->p = (struct peer){ .lfd = -1 };
	c->u = -1;
	kfix_begin(f);
	return svc_open(&c->s) && (!n || peer_start(&c->p, steps, n));
}

bool kcase_answers(struct kfix *f, struct kcase *c, const char *resp, int n)
{
	struct peer_step steps[PEER_STEPS_MAX];

	return kcase_open(f, c, steps, answer_steps(steps, resp, n));
}

void kcase_close(struct kcase *c)
{
	if (c->u >= 0)
		close(c->u);
	c->u = -1;
	peer_stop(&c->p);
	svc_close(&c->s);
}

void svc_close(struct svc *s)
{
	int *fds[] = { &s->cfd, &s->afd, &s->lfd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

bool svc_request(struct svc *s, const char *req)
{
	return !sock_send(s->cfd, req) && svc_read_heads(s->afd, 1, 4096);
}

bool svc_answer(struct svc *s, const char *resp)
{
	char buf[4096];

	return !sock_send(s->afd, resp) &&
	       sock_recv_until(s->cfd, buf, sizeof(buf), "\r\n\r\n", sizeof(buf)) > 0;
}

static int count_heads(const char *buf)
{
	int n = 0;

	for (; (buf = strstr(buf, "\r\n\r\n")); buf += 4)
		n++;
	return n;
}

bool svc_read_heads(int fd, int n, size_t chunk)
{
	char buf[8192] = "";
	size_t got = 0;

	while (count_heads(buf) < n && got < sizeof(buf) - 1) {
		size_t want = chunk < sizeof(buf) - 1 - got ? chunk : sizeof(buf) - 1 - got;
		ssize_t r = read(fd, buf + got, want);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
		buf[got] = 0;
	}
	return count_heads(buf) >= n;
}

bool call_on(int fd, const char *req)
{
	char buf[4096];

	return !sock_send(fd, req) && sock_recv_until(fd, buf, sizeof(buf), "\r\n\r\n", 4096) > 0 &&
	       strstr(buf, "\r\n\r\n");
}

bool call_once(int port, int *fd, const char *req)
{
	int u = sock_connect(port);
	bool ok;

	if (u < 0)
		return false;
	sock_deadline(u);
	ok = call_on(u, req);
	if (fd)
		*fd = u;
	else
		close(u);
	return ok;
}

bool write_pieces(int fd, const char *buf, size_t piece)
{
	size_t off, len = strlen(buf);

	for (off = 0; off < len; off += piece)
		if (write_all_fd(fd, buf + off, piece < len - off ? piece : len - off))
			return false;
	return true;
}

void sock_deadline(int fd)
{
	struct timeval tv = { .tv_sec = 2 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void note_hash(void *ctx, struct http_framer *fr, __u32 ev)
{
	if ((ev & HTTP_EV_START) && !*(__u32 *)ctx)
		*(__u32 *)ctx = fr->hash;
}

__u32 req_hash(const char *req)
{
	struct http_framer fr;
	__u32 hash = 0;

	http_framer_init(&fr, HTTP_KIND_REQUEST, 0);
	http_feed(&fr, (const __u8 *)req, strlen(req), note_hash, &hash);
	return hash;
}

bool addr_is(const struct claimd_addr *a, int port)
{
	static const __u8 lo[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };

	return !memcmp(a->addr, lo, sizeof(lo)) && a->port == port;
}

__u32 self_tid(void)
{
	return gettid();
}

bool kfix_check_ingress(const struct claimd_ingress *in, const struct svc *s, const char *req,
			int status, int n_egress)
{
	char comm[CLAIMD_COMM_LEN] = "";

	if (!ASSERT_OK_PTR(in, "ingress record"))
		return false;
	prctl(PR_GET_NAME, comm);
	return ASSERT_EQ(in->hdr.version, CLAIMD_RECORD_VERSION, "record version") &
	       ASSERT_EQ(in->hdr.size, claimd_ingress_size(in->n_egress), "record size") &
	       ASSERT_EQ(in->tgid, (__u32)getpid(), "tgid") &
	       ASSERT_EQ(in->tid, self_tid(), "tid") &
	       ASSERT_TRUE(addr_is(&in->local, s->port), "local: the service's port") &
	       ASSERT_TRUE(addr_is(&in->peer, s->client_port), "peer: the client's port") &
	       ASSERT_STREQ(in->comm, comm, "comm") & ASSERT_EQ(in->method, HTTP_M_GET, "method") &
	       ASSERT_EQ(in->target_hash, req_hash(req), "target hash") &
	       ASSERT_EQ(in->status, status, "status") &
	       ASSERT_EQ(in->n_egress, n_egress, "egress logged") &
	       ASSERT_GT(in->start_ns, 0, "start") & ASSERT_GE(in->end_ns, in->start_ns, "end");
}

bool kfix_check_verdict(const struct claimd_ingress *in, int verdict, int rule, int cause)
{
	return ASSERT_EQ(in->verdict, verdict, "verdict") & ASSERT_EQ(in->rule, rule, "rule") &
	       ASSERT_EQ(in->cause, cause, "cause");
}

bool kfix_check_egress(const struct claimd_egress *e, int port, const char *req, int status,
		       int flags)
{
	if (!ASSERT_OK_PTR(e, "egress"))
		return false;
	return ASSERT_TRUE(addr_is(&e->callee, port), "callee") &
	       ASSERT_EQ(e->method, req ? HTTP_M_GET : HTTP_M_NONE, "method") &
	       ASSERT_EQ(e->target_hash, req ? req_hash(req) : 0, "target hash") &
	       ASSERT_EQ(e->status, status, "status") & ASSERT_EQ(e->flags, flags, "flags") &
	       ASSERT_GT(e->start_ns, 0, "start") & ASSERT_GE(e->end_ns, e->start_ns, "end");
}
