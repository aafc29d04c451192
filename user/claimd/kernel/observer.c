// SPDX-License-Identifier: GPL-2.0
/* Loading, configuring and attaching the observer programs; see observer_api.h. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/counters.h"
#include "kernel/io_attach.h"
#include "kernel/connect_hooks.h"
#include "log.h"
#include "kernel/observer_api.h"
#include "observer.skel.h"
#include "kernel/sock_marks.h"
#include "kernel/slots.h"
#include "pidlist.h"
#include "host/sysprobe.h"
#include "verdict.h"

#define DETACH_THREADS 32

/*
 * The slots of processes gone are given back together, at most every
 * SLOTS_SWEEP_S or once SLOTS_GONE_MAX wait: a pass reads every slot's
 * owner, 1-2 ms over 16,384 of them, where a process's exit closes its
 * connections' ends already, leaving a slot behind only where an end was
 * missed. Until then such a slot stays taken: another connection that
 * points at it is kept in the table, and a process given the same pid
 * finds the old entry's socket is not its own (conn_stale).
 */
#define SLOTS_SWEEP_S  30
#define SLOTS_GONE_MAX 1024

struct observer {
	struct observer_bpf *skel;
	int ncpus;
	struct bpf_link *io_links[IO_ATTACH_MAX]; /* tp_io_x beyond its section's tracepoint */
	struct bpf_link **uprobe_links; /* what the runtimes attached (probes/), detached here */
	int n_uprobe_links, cap_uprobe_links;
	char verdicts_path[512];
	unsigned long forgotten;
	bool verdicts_reused;
	__u32 generation;
	__u32 thread_slots; /* thread contexts in slots, beside the threads table */
	__u32 conn_slots;   /* connections in slots, beside the conns table */
	void *words;	    /* traced[], mapped: a word per tgid (word_of) */
	__u32 n_words;
	struct slots_view slots;	  /* conn_slots, mapped: their owners read */
	__u32 slots_gone[SLOTS_GONE_MAX]; /* processes gone whose slots wait */
	int n_slots_gone;
	struct timespec slots_swept;
};

/* An array map's elements lie 8 bytes apart, whatever their size. */
#define WORD_STRIDE 8

static size_t words_bytes(__u32 n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return ((size_t)n * WORD_STRIDE + page - 1) / page * page;
}

static __u32 *word_of(struct observer *obs, __u32 tgid)
{
	return tgid < obs->n_words ? (__u32 *)((char *)obs->words + (size_t)tgid * WORD_STRIDE)
				   : NULL;
}

/* traced[] into claimd's memory: a word's bits are set and cleared atomically, as the programs do. */
static int words_map(struct observer *obs)
{
	struct bpf_map *m = obs->skel->maps.traced;
	void *p;

	obs->n_words = bpf_map__max_entries(m);
	p = mmap(NULL, words_bytes(obs->n_words), PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(m), 0);
	if (p == MAP_FAILED) {
		obs->n_words = 0;
		return -errno;
	}
	obs->words = p;
	return 0;
}

static __u32 pid_max(void)
{
	unsigned long v = 32768;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 32768;
		fclose(f);
	}
	/* One flag per possible tgid; beyond 4M, programs fall back to the conn table. */
	if (v > (1u << 22))
		v = 1u << 22;
	return v;
}

static int set_filters(struct observer *obs, const struct observer_config *cfg)
{
	__u8 one = 1;
	int i, fd, cg;

	for (i = 0; i < cfg->n_pids; i++) {
		fd = bpf_map__fd(obs->skel->maps.pid_filter);
		if (bpf_map_update_elem(fd, &cfg->pids[i], &one, BPF_ANY))
			return -errno;
	}
	for (i = 0; i < cfg->n_ports; i++) {
		fd = bpf_map__fd(obs->skel->maps.port_filter);
		if (bpf_map_update_elem(fd, &cfg->ports[i], &one, BPF_ANY))
			return -errno;
	}
	if (cfg->cgroup) {
		__u32 zero = 0;

		cg = open(cfg->cgroup, O_RDONLY | O_DIRECTORY);
		if (cg < 0) {
			pr_err("cannot open cgroup %s: %s", cfg->cgroup, strerror(errno));
			return -errno;
		}
		fd = bpf_map__fd(obs->skel->maps.cgroup_filter);
		if (bpf_map_update_elem(fd, &zero, &cg, BPF_ANY)) {
			int err = -errno;

			pr_err("cannot filter on cgroup %s (is it on cgroup v2?): %s", cfg->cgroup,
			       strerror(errno));
			close(cg);
			return err;
		}
		close(cg);
	}
	return 0;
}

/*
 * An earlier claimd's verdict map, if it is pinned and has our layout: reused,
 * so services that mapped it keep reading live slots across a restart.
 */
static void reuse_verdicts(struct observer *obs)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(obs->verdicts_path);

	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_MAP_TYPE_ARRAY &&
	    info.key_size == 4 && info.value_size == sizeof(struct claim_slot) &&
	    info.max_entries == CLAIM_SLOTS && (info.map_flags & BPF_F_MMAPABLE) &&
	    !bpf_map__reuse_fd(obs->skel->maps.verdicts, fd)) {
		struct claim_map_header h;
		__u32 zero = 0;

		obs->verdicts_reused = true;
		if (!bpf_map_lookup_elem(fd, &zero, &h) && h.magic == CLAIM_MAP_MAGIC)
			obs->generation = h.generation;
	} else {
		pr_warn("replacing %s: it is not a verdict map of this claimd's layout",
			obs->verdicts_path);
		unlink(obs->verdicts_path);
	}
	close(fd);
}

/* A new verdict map: frozen (nobody writes it but the programs), pinned 0666. */
static int publish_verdicts(struct observer *obs)
{
	int fd = bpf_map__fd(obs->skel->maps.verdicts);

	if (obs->verdicts_reused)
		return 0;
	if (bpf_map_freeze(fd)) {
		pr_err("cannot freeze the verdict map: %s", strerror(errno));
		return -errno;
	}
	unlink(obs->verdicts_path);
	if (bpf_obj_pin(fd, obs->verdicts_path)) {
		pr_err("cannot pin the verdict map at %s: %s", obs->verdicts_path, strerror(errno));
		return -errno;
	}
	/* Readable and mappable by every process; writable by none (frozen). */
	if (chmod(obs->verdicts_path, 0666)) {
		pr_err("cannot open %s to services: %s", obs->verdicts_path, strerror(errno));
		return -errno;
	}
	return 0;
}

int observer__set_alive(struct observer *obs, bool alive)
{
	__u64 arg = (alive ? 1 : 0) | (__u64)obs->generation << 32;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &arg, .ctx_size_in = sizeof(arg));
	int err = bpf_prog_test_run_opts(bpf_program__fd(obs->skel->progs.claimd_hdr), &opts);

	if (err || opts.retval) {
		pr_warn("cannot mark the verdict map %s: %s", alive ? "alive" : "stopped",
			strerror(err ? errno : EINVAL));
		return err ? -errno : -EINVAL;
	}
	return 0;
}

int observer__sock_mark(struct observer *obs, __u32 slot, int n)
{
	return sock_marks_change(obs->skel->progs.claimd_mark, slot, n);
}

/* The inode the kernel numbers a network namespace by (ns.inum). */
int observer__netns_inode(const char *path, __u64 *ino)
{
	struct stat st;

	if (stat(path, &st)) {
		pr_err("cannot use network namespace %s: %s", path, strerror(errno));
		return -errno;
	}
	if ((st.st_mode & S_IFMT) != S_IFREG || st.st_size != 0 || st.st_ino > UINT32_MAX) {
		pr_err("%s is not a network namespace (a /proc/PID/ns/net or a bind mount of one)",
		       path);
		return -EINVAL;
	}
	*ino = st.st_ino;
	return 0;
}

/* The observer's cgroup hooks on connects (bpf/connects.c). */
static struct connect_hooks hooks_of(const struct observer *obs)
{
	return (struct connect_hooks){ obs->skel->progs.cg_unix_connect,
				       obs->skel->progs.cg_inet4_connect,
				       obs->skel->progs.cg_inet6_connect };
}

struct observer *observer__load(const struct observer_config *cfg)
{
	struct observer *obs = calloc(1, sizeof(*obs));
	struct connect_hooks hooks;
	__u32 flags = 0;
	int err;

	if (!obs)
		return NULL;
	obs->ncpus = libbpf_num_possible_cpus();
	obs->skel = observer_bpf__open();
	if (!obs->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", sysprobe__explain(err));
		goto fail;
	}
	if (cfg->n_pids)
		flags |= CLAIMD_FILTER_PID;
	if (cfg->n_ports)
		flags |= CLAIMD_FILTER_PORT;
	if (cfg->cgroup)
		flags |= CLAIMD_FILTER_CGROUP;
	if (cfg->netns) {
		flags |= CLAIMD_FILTER_NETNS;
		obs->skel->rodata->filter_netns = cfg->netns_ino;
	}
	obs->skel->rodata->self_tgid = getpid();
	obs->skel->rodata->sock_head_untyped = cfg->untyped_cast;
	obs->skel->rodata->filter_flags = flags;
	if (cfg->fail_status)
		obs->skel->rodata->fail_status_min = cfg->fail_status;
	if (cfg->grpc_fail_codes_set)
		obs->skel->rodata->grpc_fail_codes = cfg->grpc_fail_codes;
	snprintf(obs->verdicts_path, sizeof(obs->verdicts_path), "%s/%s",
		 cfg->pin_dir ? cfg->pin_dir : "/sys/fs/bpf/claimd", CLAIM_PIN_NAME);
	reuse_verdicts(obs);
	obs->generation++;
	bpf_map__set_max_entries(obs->skel->maps.traced, pid_max());
	bpf_map__set_max_entries(obs->skel->maps.outside_calls, pid_max());
	obs->conn_slots =
		slots_size(obs->skel->maps.conn_slots, obs->skel->maps.conns,
			   &obs->skel->rodata->conn_slots_mask, cfg->conns_max ?: CLAIMD_CONNS_MAX);
	/* Sockets born and not ended: never fewer places than connections. */
	if (cfg->conns_max > CLAIMD_CONNS_MAX)
		bpf_map__set_max_entries(obs->skel->maps.socks, cfg->conns_max);
	obs->thread_slots = slots_size(obs->skel->maps.thread_slots, obs->skel->maps.threads,
				       &obs->skel->rodata->thread_slots_mask,
				       cfg->threads_max ?: CLAIMD_THREADS_MAX);
	if (cfg->ringbuf_size)
		bpf_map__set_max_entries(obs->skel->maps.events, cfg->ringbuf_size);
	if (cfg->classes_max)
		bpf_map__set_max_entries(obs->skel->maps.edge_class, cfg->classes_max);
	if (cfg->edges_max)
		bpf_map__set_max_entries(obs->skel->maps.edge_counts, cfg->edges_max);
	obs->skel->rodata->sample_every = cfg->sample_every;
	if (cfg->no_uprobes) {
		struct bpf_program *prog;

		/* Degraded: TLS and context probes stay out; the rest loads. */
		bpf_object__for_each_program(prog, obs->skel->obj)
			if (bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE)
				bpf_program__set_autoload(prog, false);
	}

	hooks = hooks_of(obs);
	connect_hooks_prepare(&hooks, cfg->unix_connects);
	err = observer_bpf__load(obs->skel);
	if (err) {
		pr_err("loading the BPF programs failed: %s", sysprobe__explain(err));
		goto fail;
	}
	err = words_map(obs);
	if (err) {
		pr_err("cannot map the processes' words: %s", strerror(-err));
		goto fail;
	}
	err = slots_view_map(&obs->slots, obs->skel->maps.conn_slots);
	if (err) {
		pr_err("cannot map the connection slots: %s", strerror(-err));
		goto fail;
	}
	clock_gettime(CLOCK_MONOTONIC, &obs->slots_swept);
	/*
	 * The kernel's types, read for the relocations (and by sysprobe before),
	 * are freed now: about 10 MiB that would stay resident in the heap,
	 * where glibc took them once a first copy's free raised its mmap
	 * threshold.
	 */
	malloc_trim(0);
	err = set_filters(obs, cfg);
	if (!err)
		err = publish_verdicts(obs);
	if (err)
		goto fail;
	return obs;
fail:
	observer__destroy(obs);
	errno = -err;
	return NULL;
}

int observer__attach(struct observer *obs)
{
	struct connect_hooks hooks = hooks_of(obs);
	int err = observer_bpf__attach(obs->skel);

	if (!err)
		err = io_attach(obs->skel->progs.tp_io_x, obs->io_links);
	/* Held among the skeleton's links: detached with them. */
	if (!err) {
		struct bpf_link *links[3];

		connect_hooks_attach(&hooks, links);
		obs->skel->links.cg_unix_connect = links[0];
		obs->skel->links.cg_inet4_connect = links[1];
		obs->skel->links.cg_inet6_connect = links[2];
	}
	if (err)
		pr_err("attaching the BPF programs failed: %s", sysprobe__explain(err));
	return err;
}

struct bpf_object *observer__object(const struct observer *obs)
{
	return obs->skel->obj;
}

int observer__keep_links(struct observer *obs, struct bpf_link **links, int n)
{
	int i;

	if (obs->n_uprobe_links + n > obs->cap_uprobe_links) {
		int cap = (obs->n_uprobe_links + n) * 2;
		struct bpf_link **l = realloc(obs->uprobe_links, cap * sizeof(*l));

		if (!l) {
			for (i = 0; i < n; i++)
				bpf_link__destroy(links[i]);
			return -ENOMEM;
		}
		obs->uprobe_links = l;
		obs->cap_uprobe_links = cap;
	}
	for (i = 0; i < n; i++)
		obs->uprobe_links[obs->n_uprobe_links++] = links[i];
	return 0;
}

struct detach_work {
	struct bpf_link **links;
	int n;
	int next; /* the next link to destroy, taken atomically */
};

static void *detach_worker(void *arg)
{
	struct detach_work *w = arg;
	int i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->n)
		bpf_link__destroy(w->links[i]);
	return NULL;
}

/*
 * Detaching a tracepoint or uprobe link waits for an RCU grace period in
 * the kernel (20 to 100 ms each on a small VM): one after the other, the
 * links of claimd take over a second. Closed from several threads at once,
 * their waits overlap. What could not be handed to a thread is closed here.
 */
static void detach_all(struct observer *obs)
{
	struct bpf_link **skel_links = (struct bpf_link **)&obs->skel->links;
	int n_skel = sizeof(obs->skel->links) / sizeof(struct bpf_link *);
	struct detach_work w = { 0 };
	pthread_t th[DETACH_THREADS];
	int i, started = 0;

	w.links = calloc(n_skel + IO_ATTACH_MAX + obs->n_uprobe_links, sizeof(*w.links));
	if (!w.links)
		return; /* observer_bpf__destroy detaches them one by one */
	/* The skeleton's links struct holds nothing but link pointers. */
	for (i = 0; i < n_skel; i++) {
		if (skel_links[i])
			w.links[w.n++] = skel_links[i];
		skel_links[i] = NULL;
	}
	for (i = 0; i < IO_ATTACH_MAX; i++) {
		if (obs->io_links[i])
			w.links[w.n++] = obs->io_links[i];
		obs->io_links[i] = NULL;
	}
	for (i = 0; i < obs->n_uprobe_links; i++)
		w.links[w.n++] = obs->uprobe_links[i];
	obs->n_uprobe_links = 0;
	for (i = 0; i < DETACH_THREADS && i < w.n; i++)
		if (!pthread_create(&th[started], NULL, detach_worker, &w))
			started++;
	detach_worker(&w); /* this thread too: and all of them if none started */
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(w.links);
}

void observer__destroy(struct observer *obs)
{
	if (!obs)
		return;
	if (obs->skel)
		detach_all(obs);
	io_detach(obs->io_links); /* what detach_all could not take */
	while (obs->n_uprobe_links)
		bpf_link__destroy(obs->uprobe_links[--obs->n_uprobe_links]);
	free(obs->uprobe_links);
	if (obs->words)
		munmap(obs->words, words_bytes(obs->n_words));
	slots_view_unmap(&obs->slots);
	observer_bpf__destroy(obs->skel);
	free(obs);
}

int observer__events_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.events);
}

int observer__conns_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.conns);
}

int observer__listeners_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.listeners);
}

int observer__listen_ports_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.listen_ports);
}

int observer__unix_served_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.unix_served);
}

int observer__unix_unserved_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.unix_unserved);
}

int observer__traced_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.traced);
}

__u32 observer__proc_word(struct observer *obs, __u32 tgid, __u32 set, __u32 clear)
{
	__u32 *w = word_of(obs, tgid);

	if (!w)
		return 0;
	if (set)
		__atomic_fetch_or(w, set, __ATOMIC_RELAXED);
	if (clear)
		__atomic_fetch_and(w, ~clear, __ATOMIC_RELAXED);
	return __atomic_load_n(w, __ATOMIC_RELAXED);
}

int observer__procs_with(struct observer *obs, __u32 bits,
			 void (*fn)(__u32 tgid, __u32 word, void *arg), void *arg)
{
	__u32 tgid, word;
	int n = 0;

	for (tgid = 1; tgid < obs->n_words; tgid++) {
		word = __atomic_load_n(word_of(obs, tgid), __ATOMIC_RELAXED);
		if (word & bits) {
			fn(tgid, word, arg);
			n++;
		}
	}
	return n;
}

void observer__proc_word_add(struct observer *obs, __u32 tgid, __u32 n)
{
	__u32 *w = word_of(obs, tgid);

	if (w)
		__atomic_fetch_add(w, n, __ATOMIC_RELAXED);
}

int observer__programs_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.programs);
}

void observer__read_programs(struct observer *obs, bool on)
{
	__atomic_store_n(&obs->skel->bss->programs_read, on ? 1 : 0, __ATOMIC_RELAXED);
}

bool observer__go_goid_offset(struct observer *obs, __u32 off)
{
	__u32 zero = 0;

	return __atomic_compare_exchange_n(&obs->skel->bss->go_goid_offset, &zero, off, false,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
	       zero == off;
}

bool observer__reads_programs(const struct observer *obs)
{
	return __atomic_load_n(&obs->skel->bss->programs_read, __ATOMIC_RELAXED);
}

int observer__outside_calls_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.outside_calls);
}

int observer__proc_mark_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.proc_mark);
}

int observer__classes_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.edge_class);
}

int observer__verdicts_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.verdicts);
}

const char *observer__verdicts_path(const struct observer *obs)
{
	return obs->verdicts_path;
}

bool observer__verdicts_reused(const struct observer *obs)
{
	return obs->verdicts_reused;
}

struct json_object *observer__programs_json(const struct observer *obs)
{
	struct json_object *arr = json_object_new_array();
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obs->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		struct json_object *o;
		int fd = bpf_program__fd(prog);

		memset(&info, 0, sizeof(info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(bpf_program__name(prog)));
		json_object_object_add(o, "id", json_object_new_int64(info.id));
		json_object_object_add(o, "run_cnt", json_object_new_uint64(info.run_cnt));
		json_object_object_add(o, "run_time_ns", json_object_new_uint64(info.run_time_ns));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* The per-CPU values of every counter, in one system call; -errno if the kernel cannot. */
static int stats_batch(int fd, __u64 *vals)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 keys[CLAIMD_ST__COUNT], count = CLAIMD_ST__COUNT, token;
	int err = bpf_map_lookup_batch(fd, NULL, &token, keys, vals, &count, &opts);

	if (err && errno != ENOENT)
		return -errno;
	if (count != CLAIMD_ST__COUNT)
		return -EIO;
	return 0;
}

int observer__stats(const struct observer *obs, __u64 out[CLAIMD_ST__COUNT])
{
	int fd = bpf_map__fd(obs->skel->maps.stats);
	__u64 *vals = calloc((size_t)obs->ncpus * CLAIMD_ST__COUNT, sizeof(__u64));
	__u32 k;
	int c;

	if (!vals)
		return -ENOMEM;
	if (stats_batch(fd, vals)) {
		/* One counter at a time (a kernel without batch lookups of arrays). */
		for (k = 0; k < CLAIMD_ST__COUNT; k++)
			if (bpf_map_lookup_elem(fd, &k, vals + (size_t)k * obs->ncpus))
				memset(vals + (size_t)k * obs->ncpus, 0,
				       obs->ncpus * sizeof(__u64));
	}
	for (k = 0; k < CLAIMD_ST__COUNT; k++) {
		out[k] = 0;
		for (c = 0; c < obs->ncpus; c++)
			out[k] += vals[(size_t)k * obs->ncpus + c];
	}
	free(vals);
	return 0;
}

const char *observer__stat_name(int which)
{
	return counters__kernel_name(which);
}

#define FORGET_BATCH 256

/*
 * The connections of the processes listed, into gone (at most max): their
 * keys, and the filter's slot of each whose count is its own (a seeded
 * one whose socket the programs never saw: -1 for the others, whose count
 * goes with their socket's end).
 */
struct gone_conn {
	struct claimd_conn_key key;
	long slot;
};

static long own_slot(const struct claimd_conn *c)
{
	return c->sk_tag ? -1 : (long)claimd_sock_slot(c->local.port, c->remote.port);
}

static int conns_of(int fd, const __u32 *tgids, int n, struct gone_conn *gone, int max)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct claimd_conn_key *keys = calloc(FORGET_BATCH, sizeof(*keys));
	struct claimd_conn *vals = calloc(FORGET_BATCH, sizeof(*vals));
	struct claimd_conn_key key, next, *prev = NULL;
	struct claimd_conn one;
	__u64 token[8];
	void *in = NULL;
	int found = 0, err;
	__u32 i, count;

	if (!keys || !vals)
		goto one_by_one;
	/* In batches: one system call per FORGET_BATCH connections. */
	for (;;) {
		count = FORGET_BATCH;
		err = bpf_map_lookup_batch(fd, in, token, keys, vals, &count, &opts);
		if (err && errno != ENOENT) {
			if (!in)
				goto one_by_one; /* no batches here */
			break;
		}
		for (i = 0; i < count && found < max; i++)
			if (pid_listed(keys[i].tgid, tgids, n))
				gone[found++] = (struct gone_conn){ keys[i], own_slot(&vals[i]) };
		if (err)
			break;
		in = token;
	}
	free(keys);
	free(vals);
	return found;
one_by_one:
	free(keys);
	free(vals);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (pid_listed(next.tgid, tgids, n) && found < max &&
		    !bpf_map_lookup_elem(fd, &next, &one))
			gone[found++] = (struct gone_conn){ next, own_slot(&one) };
		key = next;
		prev = &key;
	}
	return found;
}

bool observer__conn_in_slot(const struct observer *obs, const struct claimd_conn_key *key)
{
	__u32 idx = claimd_conn_slot_index(key, obs->skel->rodata->conn_slots_mask);

	/* Read in place: no copy of the slot's entry, no system call. */
	return slots_view_owner(&obs->slots, idx) == claimd_conn_slot_word(key);
}

int observer__sweep_slots(struct observer *obs, bool now)
{
	struct timespec t;
	int freed;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (!obs->n_slots_gone || (!now && obs->n_slots_gone < SLOTS_GONE_MAX &&
				   t.tv_sec - obs->slots_swept.tv_sec < SLOTS_SWEEP_S))
		return 0;
	/* Sorted: each slot's owner is looked for among up to SLOTS_GONE_MAX. */
	pid_sort(obs->slots_gone, obs->n_slots_gone);
	freed = slots_forget(&obs->slots, obs->skel->progs.claimd_forget_slots, obs->slots_gone,
			     obs->n_slots_gone);
	obs->slots_swept = t;
	obs->n_slots_gone = 0;
	if (freed < 0)
		return freed;
	obs->forgotten += (unsigned long)freed;
	return freed;
}

int observer__forget_processes(struct observer *obs, const __u32 *tgids, int n)
{
	int fd = observer__conns_fd(obs);
	struct gone_conn gone[512];
	int found, i, slots = 0, r;

	/* Their slots wait for the next pass over all slots (SLOTS_SWEEP_S). */
	for (i = 0; i < n; i++) {
		if (obs->n_slots_gone == SLOTS_GONE_MAX) {
			r = observer__sweep_slots(obs, true); /* empties the list, failed or not */
			slots += r > 0 ? r : 0;
		}
		obs->slots_gone[obs->n_slots_gone++] = tgids[i];
	}

	/* One walk for all of them; collect first, since deleting restarts a walk. */
	found = conns_of(fd, tgids, n, gone, (int)(sizeof(gone) / sizeof(gone[0])));
	for (i = 0; i < found; i++) {
		if (bpf_map_delete_elem(fd, &gone[i].key))
			continue; /* gone already: whoever removed it lowered its mark */
		if (gone[i].slot >= 0)
			observer__sock_mark(obs, gone[i].slot, -1);
		obs->forgotten++;
	}
	return found + slots;
}

unsigned long observer__forgotten(const struct observer *obs)
{
	return obs->forgotten;
}

int observer__edge_counts_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.edge_counts);
}

int observer__dirty_edges_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.dirty_edges);
}

int observer__dirty_services_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.dirty_services);
}

volatile __u32 *observer__count_epoch(struct observer *obs)
{
	return &obs->skel->bss->count_epoch; /* .bss is mapped into claimd */
}

int observer__service_counts_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.service_counts);
}

int observer__service_forget_fd(const struct observer *obs)
{
	return bpf_program__fd(obs->skel->progs.claimd_forget_services);
}

void observer__want_records(struct observer *obs, bool on)
{
	/* .bss is mapped into claimd: the programs see the store at once. */
	__atomic_store_n(&obs->skel->bss->records_on, on ? 1 : 0, __ATOMIC_RELAXED);
}

int observer__threads_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.threads);
}

__u32 observer__thread_slots(const struct observer *obs)
{
	return obs->thread_slots;
}

__u32 observer__conn_slots(const struct observer *obs)
{
	return obs->conn_slots;
}
