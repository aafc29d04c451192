// SPDX-License-Identifier: GPL-2.0
/* Loading, configuring and attaching the observer programs; see observer.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "observer_api.h"
#include "observer.skel.h"
#include "sysprobe.h"

struct observer {
	struct observer_bpf *skel;
	int ncpus;
};

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

struct observer *observer__load(const struct observer_config *cfg)
{
	struct observer *obs = calloc(1, sizeof(*obs));
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
	obs->skel->rodata->self_tgid = getpid();
	obs->skel->rodata->filter_flags = flags;
	bpf_map__set_max_entries(obs->skel->maps.traced, pid_max());
	if (cfg->conns_max)
		bpf_map__set_max_entries(obs->skel->maps.conns, cfg->conns_max);
	if (cfg->threads_max)
		bpf_map__set_max_entries(obs->skel->maps.threads, cfg->threads_max);

	err = observer_bpf__load(obs->skel);
	if (err) {
		pr_err("loading the BPF programs failed: %s", sysprobe__explain(err));
		goto fail;
	}
	err = set_filters(obs, cfg);
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
	int err = observer_bpf__attach(obs->skel);

	if (err)
		pr_err("attaching the BPF programs failed: %s", sysprobe__explain(err));
	return err;
}

void observer__destroy(struct observer *obs)
{
	if (!obs)
		return;
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

int observer__traced_fd(const struct observer *obs)
{
	return bpf_map__fd(obs->skel->maps.traced);
}

int observer__stats(const struct observer *obs, __u64 out[CLAIMD_ST__COUNT])
{
	int fd = bpf_map__fd(obs->skel->maps.stats);
	__u64 *vals = calloc(obs->ncpus, sizeof(__u64));
	__u32 k;
	int c;

	if (!vals)
		return -ENOMEM;
	for (k = 0; k < CLAIMD_ST__COUNT; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < obs->ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

const char *observer__stat_name(int which)
{
	static const char *const names[CLAIMD_ST__COUNT] = {
		[CLAIMD_ST_RECORDS] = "records",
		[CLAIMD_ST_RB_DROPS] = "ringbuf_drops",
		[CLAIMD_ST_EGRESS_OVERFLOW] = "egress_log_overflow",
		[CLAIMD_ST_FIFO_OVERFLOW] = "pipeline_overflow",
		[CLAIMD_ST_PARSE_ERRORS] = "parse_errors",
		[CLAIMD_ST_PARSE_RESYNC] = "parse_resyncs",
		[CLAIMD_ST_PARSE_TRUNCATED] = "parse_truncated",
		[CLAIMD_ST_UNMATCHED] = "unmatched_responses",
		[CLAIMD_ST_CONN_FULL] = "conn_table_full",
		[CLAIMD_ST_THREAD_FULL] = "thread_table_full",
		[CLAIMD_ST_MUX] = "multiplexed",
		[CLAIMD_ST_CONNS] = "connections",
		[CLAIMD_ST_INGRESS] = "ingresses",
		[CLAIMD_ST_EGRESS] = "egresses",
	};

	return which >= 0 && which < CLAIMD_ST__COUNT ? names[which] : "?";
}

static int tgid_listed(__u32 tgid, const __u32 *tgids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (tgids[i] == tgid)
			return 1;
	return 0;
}

int observer__forget_processes(struct observer *obs, const __u32 *tgids, int n)
{
	int fd = observer__conns_fd(obs);
	struct claimd_conn_key key, next, *prev = NULL;
	struct claimd_conn_key gone[512];
	int found = 0, i;

	/* One walk for all of them; collect first, since deleting restarts a walk. */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (tgid_listed(next.tgid, tgids, n) &&
		    found < (int)(sizeof(gone) / sizeof(gone[0])))
			gone[found++] = next;
		key = next;
		prev = &key;
	}
	for (i = 0; i < found; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	return found;
}
