# SPDX-License-Identifier: GPL-2.0
# claimd: build, test, demo, bench, install. Everything lands in build/.
#
#   make            build claimd, claimctl, libclaim, claimlab, tests
#   make test       unit tests, the fuzzers briefly, then BPF / end-to-end tests (root)
#   make demo       the retry-storm rehearsal with claimd attached
#   make bench      what claimd costs the host
#   make V=1 ...    show the commands
#   make SAN=1 ...  build user code with ASan + UBSan (into build-san/)
#   make fuzz       build the libFuzzer targets, run each FUZZ_SECONDS (default 60)
#
# Each brings the Debian packages it needs, and only those
# (scripts/install-deps.sh, by group): 'make' the build group; 'make fuzz'
# adds fuzz; 'make test' fuzz and test; 'make demo' demo; 'make bench' bench.

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build-san
else
BUILD ?= build
endif

PREFIX ?= /usr/local
DESTDIR ?=
CLANG ?= clang
CC ?= gcc
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# One folder per product under user/, and common/ for what they share.
USER_INC := -Iuser/common -Iuser/claimd -Iuser/claimctl -Iuser/libclaim
CFLAGS_BASE := -std=gnu11 -Wall -Wextra -Werror -O2 -g -MMD -MP \
	-Iheaders $(USER_INC) -I$(BUILD) -D_GNU_SOURCE
ifeq ($(SAN),1)
CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif
CFLAGS ?=
override CFLAGS := $(CFLAGS_BASE) $(CFLAGS)
LDLIBS_BPF := -lbpf -lelf -lz
LDLIBS_GO := -lcapstone
LDLIBS_JSON := -ljson-c
LDLIBS_CURL := -lcurl

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Iheaders -Iuser/libclaim -Ibpf -I$(BUILD) -MMD -MP

# One stamp per group of scripts/install-deps.sh, made once per build
# directory. Compiling waits only on the build group's.
DEPS_STAMP := $(BUILD)/.deps-build
DEPS_FUZZ := $(BUILD)/.deps-fuzz
DEPS_TEST := $(BUILD)/.deps-test
DEPS_DEMO := $(BUILD)/.deps-demo
DEPS_BENCH := $(BUILD)/.deps-bench
DEPS_GO := $(BUILD)/.deps-go
DEPS_LANGS := $(BUILD)/.deps-langs

BPF_MODS := observer parsebench protocheck keyrace
BPF_OBJS := $(patsubst %,$(BUILD)/%.bpf.o,$(BPF_MODS))
SKELS := $(patsubst %,$(BUILD)/%.skel.h,$(BPF_MODS))

# What claimd, claimctl and the lab share (user/common/), and each product's own.
COMMON_SRCS := $(sort $(wildcard user/common/*.c))
# claimd is a folder per stage (host, kernel, probes, model, fleet, expose),
# a runtime's probes a folder of probes/: every .c two levels down is built.
CLAIMD_SRCS := $(sort $(wildcard user/claimd/*.c user/claimd/*/*.c user/claimd/*/*/*.c))
CLAIMCTL_SRCS := $(sort $(wildcard user/claimctl/*.c))
LDLIBS_HTTP := -lmicrohttpd -lpthread

COMMON_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(COMMON_SRCS))
CLAIMD_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(CLAIMD_SRCS))
CLAIMCTL_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(CLAIMCTL_SRCS))

TEST_SRCS := $(sort $(wildcard tests/unit/*.c tests/bpf/*.c))
TEST_LIB_SRCS := $(sort $(wildcard tests/lib/*.c))
TEST_OBJS := $(patsubst tests/%.c,$(BUILD)/tests/%.o,$(TEST_SRCS) $(TEST_LIB_SRCS))
# Objects of claimd the unit tests exercise directly.
# Every uprobe runtime (probes/) is linked in: the registry's test finds them all.
TEST_USER_OBJS := $(patsubst %,$(BUILD)/user/claimd/%.o,kernel/record model/names model/edges \
	model/memory model/departed host/statefile kernel/procnet expose/trace_fmt host/sysprobe \
	kernel/counters model/roots expose/metrics expose/metrics_text fleet/fleet_table \
	kernel/io_attach kernel/sock_marks kernel/slots kernel/service_slots kernel/observer kernel/connect_hooks host/unix_listeners) \
	$(filter $(BUILD)/user/claimd/probes/%,$(CLAIMD_OBJS)) \
	$(BUILD)/user/claimctl/storm.o $(COMMON_OBJS)

# libclaim: the client shim, static and shared, position-independent.
LIBCLAIM_SRCS := user/libclaim/libclaim.c
LIBCLAIM_OBJS := $(patsubst user/libclaim/%.c,$(BUILD)/libclaim/%.o,$(LIBCLAIM_SRCS))

# claimlab: the storm rehearsal (user/lab/), linked with libclaim.
LAB_SRCS := $(sort $(wildcard user/lab/*.c))
LAB_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(LAB_SRCS))

VERSION := 0.1

# Programs the end-to-end tests run (tests/peers/*.c).
TEST_PEERS := $(BUILD)/tests/verdict_service $(BUILD)/tests/epoll_service $(BUILD)/tests/claim_table \
	$(BUILD)/tests/claim_leaf \
	$(BUILD)/tests/pool_proxy $(BUILD)/tests/churn_front $(BUILD)/tests/uring_front
# Programs the benchmark runs.
BENCH_TOOLS := $(BUILD)/tests/paced_client $(BUILD)/tests/pipe_hammer \
	$(BUILD)/tests/claim_bench $(BUILD)/tests/parse_bench $(BUILD)/tests/iov_hammer \
	$(BUILD)/tests/work_service $(BUILD)/tests/edge_fan

BINS := $(BUILD)/claimd $(BUILD)/claimctl $(BUILD)/libclaim.a $(BUILD)/libclaim.so \
	$(BUILD)/libclaim.pc $(BUILD)/test_progs $(TEST_PEERS) $(BENCH_TOOLS) \
	$(if $(LAB_SRCS),$(BUILD)/claimlab)

# Fuzzers (tests/fuzz/): libFuzzer with ASan and UBSan, built by clang into
# $(BUILD)/fuzz/ from the same user/ sources; not part of 'all' (they need the
# fuzz group). 'make test' builds them and runs each for a few seconds from
# its seed corpus (tests/unit/test_fuzz.c); 'make fuzz' longer.
FUZZ_TARGETS := http record memory names ctlproto fleet resp pg mysql
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Iheaders $(USER_INC) -I$(BUILD) -D_GNU_SOURCE \
	-fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_SRCS := $(patsubst %,user/claimd/%.c,kernel/record expose/trace_fmt model/names \
	model/edges model/memory model/departed host/statefile model/roots kernel/counters \
	fleet/fleet_table host/unix_listeners) \
	$(patsubst %,user/common/%.c,hashtab ctlproto log addr argnum verdict_names promql)
FUZZ_OBJS := $(patsubst user/%.c,$(BUILD)/fuzz/obj/%.o,$(FUZZ_SRCS))
FUZZ_BINS := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))

$(BUILD)/fuzz/obj/%.o: user/%.c | $(DEPS_STAMP) $(DEPS_FUZZ)
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS) | $(DEPS_STAMP) $(DEPS_FUZZ)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -Werror -fsanitize=fuzzer -MMD -MP -MF $@.d $< $(FUZZ_OBJS) \
		$(LDLIBS_JSON) $(LDLIBS_CURL) -lm -lpthread -o $@

# New inputs go to $(BUILD)/fuzz/corpus/<target>; the seeds stay as committed.
.PHONY: fuzz
fuzz: $(FUZZ_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p $(BUILD)/fuzz/corpus/$$t $(BUILD)/fuzz/artifacts; \
		printf '  %-8s %s (%s s)\n' FUZZ $$t $(FUZZ_SECONDS); \
		if ! $(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz/artifacts/$$t- \
			$(BUILD)/fuzz/corpus/$$t tests/fuzz/corpus/$$t > $(BUILD)/fuzz/$$t.log 2>&1; then \
			tail -n 60 $(BUILD)/fuzz/$$t.log; exit 1; \
		fi; \
		grep -E '^stat::(number_of_executed_units|new_units_added)' $(BUILD)/fuzz/$$t.log; \
	done

# Installed beside the programs: the systemd unit and the man pages.
CLAIMCTL_CMDS := trace status edges services graph storm top
MANPAGES := $(BUILD)/man/claimd.8 $(BUILD)/man/claimctl.8
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
# Where Debian's python3 finds a package installed under PREFIX: dist-packages,
# versioned below /usr/local.
PY_SITE ?= $(if $(filter /usr,$(PREFIX)),lib/python3/dist-packages,$(shell \
	/usr/bin/python3 -c 'import sys; print("lib/python%d.%d/dist-packages" % sys.version_info[:2])' \
	2>/dev/null || echo lib/python3/dist-packages))
BINS += $(BUILD)/claimd.service $(MANPAGES)

.PHONY: all
all: $(BINS)

$(BUILD)/.deps-%: scripts/install-deps.sh
	$(call msg,DEPS,$*)
	$(Q)mkdir -p $(@D)
	$(Q)./scripts/install-deps.sh $*
	$(Q)touch $@

# One install at a time (make -j): build first, then fuzz before test.
$(DEPS_FUZZ) $(DEPS_TEST) $(DEPS_DEMO) $(DEPS_BENCH) $(DEPS_GO) $(DEPS_LANGS): | $(DEPS_STAMP)
$(DEPS_TEST): | $(DEPS_FUZZ)

# vmlinux.h from the running kernel's BTF, rewritten only when it changed.
$(BUILD)/vmlinux.h: FORCE | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D)
	$(Q)tmp=$@.$$$$.tmp; $(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $$tmp && \
		{ cmp -s $$tmp $@ && rm -f $$tmp || { printf '  %-8s %s\n' GEN $@; mv $$tmp $@; }; }

# The runtimes observer.bpf.c includes: every bpf/runtimes/*.c, so adding
# one is adding its file. Rewritten only when the list changed.
BPF_RUNTIMES := $(sort $(wildcard bpf/runtimes/*.c))
$(BUILD)/runtimes.bpf.inc: FORCE
	$(Q)mkdir -p $(@D)
	$(Q)tmp=$@.$$$$.tmp; printf '#include "%s"\n' $(patsubst bpf/%,%,$(BPF_RUNTIMES)) > $$tmp && \
		{ cmp -s $$tmp $@ && rm -f $$tmp || { printf '  %-8s %s\n' GEN $@; mv $$tmp $@; }; }
$(BUILD)/observer.bpf.o: $(BUILD)/runtimes.bpf.inc

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h | $(DEPS_STAMP)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# User objects may include any skeleton: build them first.
$(BUILD)/user/%.o: user/%.c $(SKELS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libclaim/%.o: user/libclaim/%.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -DCLAIM_BUILD -c $< -o $@

$(BUILD)/libclaim.a: $(LIBCLAIM_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/libclaim.so: $(LIBCLAIM_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libclaim.so.0 $^ -lpthread -o $@

# The parser microbenchmark loads a BPF object of its own, its floor
# attached where claimd attaches tp_io_x (io_attach).
$(BUILD)/tests/parse_bench: tests/peers/parse_bench.c $(BUILD)/parsebench.skel.h \
		$(BUILD)/user/claimd/kernel/io_attach.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(BUILD)/user/claimd/kernel/io_attach.o $(LDLIBS_BPF) -o $@

$(BUILD)/tests/%: tests/peers/%.c $(BUILD)/libclaim.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(BUILD)/libclaim.a -lpthread -o $@

# A front calling through io_uring (liburing).
$(BUILD)/tests/uring_front: tests/peers/uring_front.c | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -luring -o $@

# The pooled reverse proxy of the shape tests: three files, OpenSSL.
POOL_PROXY_OBJS := $(patsubst %,$(BUILD)/tests/peers/%.o,pool_proxy pool_conn pool_tls)
$(BUILD)/tests/pool_proxy: $(POOL_PROXY_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -lssl -lcrypto -lpthread -o $@

$(BUILD)/libclaim.pc: user/libclaim/libclaim.pc.in
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(BUILD)/claimlab: $(LAB_OBJS) $(patsubst %,$(BUILD)/user/common/%.o,argnum addr log) \
	$(BUILD)/libclaim.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS_JSON) -lm -lpthread -o $@

$(BUILD)/claimd: $(CLAIMD_OBJS) $(COMMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS_BPF) $(LDLIBS_GO) $(LDLIBS_JSON) $(LDLIBS_HTTP) $(LDLIBS_CURL) -lm -o $@

# The map page is embedded with .incbin: -MMD does not see it.
$(BUILD)/user/claimd/expose/webmap.o: user/claimd/expose/webmap.html

$(BUILD)/claimd.service: scripts/claimd.service
	$(call msg,GEN,$@)
	$(Q)sed -e 's|@SBINDIR@|$(PREFIX)/sbin|' $< > $@

$(BUILD)/man/claimd.8: $(BUILD)/claimd
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)help2man --no-info --section 8 --version-string $(VERSION) \
		--name "error ownership for every request on this host" $< > $@

# claimctl's page has a COMMANDS section: each command's own --help.
$(BUILD)/man/claimctl.8: $(BUILD)/claimctl
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)for c in $(CLAIMCTL_CMDS); do \
		printf '.SS "claimctl %s"\n.nf\n' $$c; \
		$< $$c --help | sed -e 's/\\/\\e/g' -e 's/^/  /'; \
		printf '.fi\n'; \
	done | sed '1i [COMMANDS]' > $@.h2m
	$(Q)help2man --no-info --section 8 --version-string $(VERSION) --include $@.h2m \
		--name "ask a running claimd what it sees" $< > $@

$(BUILD)/claimctl: $(CLAIMCTL_OBJS) $(COMMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS_JSON) $(LDLIBS_CURL) -lm -lpthread -o $@

# Tests: every 'void test_<name>(void)' in tests/unit and tests/bpf is found here.
$(BUILD)/tests/tests.inc: $(TEST_SRCS)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)for f in $(TEST_SRCS); do \
		group=$$(basename $$(dirname $$f)); \
		sed -n "s/^void test_\([a-z0-9_]*\)(void)$$/DEFINE_TEST(\1, \"$$group\")/p" $$f; \
	done > $@.$$$$.tmp && mv $@.$$$$.tmp $@

$(BUILD)/tests/%.o: tests/%.c $(SKELS) | $(DEPS_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/lib -I$(BUILD)/tests -c $< -o $@

$(BUILD)/tests/lib/test_progs.o: $(BUILD)/tests/tests.inc

$(BUILD)/test_progs: $(TEST_OBJS) $(TEST_USER_OBJS) $(BUILD)/libclaim.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS_BPF) $(LDLIBS_GO) $(LDLIBS_JSON) $(LDLIBS_CURL) -lm -lpthread -o $@

# Go peers (tests/peers/go/<name>/): Debian's Go and grpc-go, GOPATH mode, no
# network. The services also built stripped (-ldflags=-s -w) as <name>.stripped.
GO_SERVICES := goservice
# goservice built plain too (-tags plain): net/http alone, no TLS server, no
# grpc-go; the kind of Go program claimd follows by its syscalls.
GO_PLAIN_BINS := $(BUILD)/tests/go/gohttp $(BUILD)/tests/go/gohttp.stripped
GO_PEER_BINS := $(foreach p,$(GO_SERVICES),$(BUILD)/tests/go/$(p) $(BUILD)/tests/go/$(p).stripped) \
	$(BUILD)/tests/go/gooffsets $(GO_PLAIN_BINS)
GO_ENV := GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= GOPROXY=off \
	GOCACHE=$(abspath $(BUILD))/go-cache
go_build = cd $(dir $<) && $(GO_ENV) go build $(1) -o $(abspath $@) .

GO_PEER_SRCS := $(wildcard tests/peers/go/*/*.go)

$(BUILD)/tests/go/%.stripped: tests/peers/go/%/main.go $(GO_PEER_SRCS) | $(DEPS_GO)
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(call go_build,-ldflags='-s -w')

$(BUILD)/tests/go/%: tests/peers/go/%/main.go $(GO_PEER_SRCS) | $(DEPS_GO)
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(call go_build,)

# Go peers that use go/claim as a service owner would (tests/peers/gomod/<name>/):
# module mode, claimd.dev/claim replaced by the project's copy, nothing fetched.
GOMOD_PEERS := claimsvc
GOMOD_PEER_BINS := $(foreach p,$(GOMOD_PEERS),$(BUILD)/tests/go/$(p))
GOMOD_ENV := GO111MODULE=on GOPATH=$(abspath $(BUILD))/gopath GOFLAGS=-mod=mod GOPROXY=off \
	GOCACHE=$(abspath $(BUILD))/go-cache
GO_CLAIM_SRCS := $(wildcard go/claim/*.go go/claim/*.s go/claim/go.mod)

$(BUILD)/tests/go/%: tests/peers/gomod/%/main.go tests/peers/gomod/%/go.mod $(GO_CLAIM_SRCS) \
		| $(DEPS_LANGS)
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(dir $<) && $(GOMOD_ENV) go build -o $(abspath $@) .

# goservice built plain (-tags plain, GO_PLAIN_BINS above).
$(BUILD)/tests/go/gohttp.stripped: tests/peers/go/goservice/main.go $(GO_PEER_SRCS) | $(DEPS_GO)
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(call go_build,-tags plain -ldflags='-s -w')

$(BUILD)/tests/go/gohttp: tests/peers/go/goservice/main.go $(GO_PEER_SRCS) | $(DEPS_GO)
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(call go_build,-tags plain)

.PHONY: go-peers
go-peers: $(GO_PEER_BINS) $(GOMOD_PEER_BINS)

# libclaim for Java (java/, Maven's layout): the package built into
# $(BUILD)/java/libclaim.jar with the JDK's javac against Debian's JNA, its
# JUnit 4 tests into $(BUILD)/java/test-classes (make test runs them).
JNA_JAR := /usr/share/java/jna.jar
JUNIT_CP := /usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
LIBCLAIM_JAVA_SRCS := $(wildcard java/src/main/java/org/claimd/libclaim/*.java)
LIBCLAIM_JAVA_TESTS := $(wildcard java/src/test/java/org/claimd/libclaim/*.java)
LIBCLAIM_JAR := $(BUILD)/java/libclaim.jar
LIBCLAIM_JAVA_TESTED := $(BUILD)/java/test-classes/.built

$(LIBCLAIM_JAR): $(LIBCLAIM_JAVA_SRCS) | $(DEPS_LANGS)
	$(call msg,JAR,$@)
	$(Q)rm -rf $(BUILD)/java/classes && mkdir -p $(BUILD)/java/classes
	$(Q)javac -d $(BUILD)/java/classes -cp $(JNA_JAR) $^
	$(Q)jar cf $@ -C $(BUILD)/java/classes .

$(LIBCLAIM_JAVA_TESTED): $(LIBCLAIM_JAVA_TESTS) $(LIBCLAIM_JAR)
	$(call msg,JAVAC,$(@D))
	$(Q)mkdir -p $(@D)
	$(Q)javac -d $(@D) -cp $(LIBCLAIM_JAR):$(JNA_JAR):$(JUNIT_CP) $(LIBCLAIM_JAVA_TESTS)
	$(Q)touch $@

# libclaim for Node.js (node/): its Node-API addon, built against the
# headers of the test group's Node.js (no node-gyp, no download), into
# $(BUILD)/node/claim.node; it loads libclaim.so as the other packages do.
NODE_ADDON := $(BUILD)/node/claim.node

$(NODE_ADDON): node/src/claim_napi.c user/libclaim/claim.h | $(DEPS_LANGS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -Wno-unused-parameter -shared -fPIC -I/usr/include/node \
		-Iuser/libclaim -DNODE_GYP_MODULE_NAME=claim $< -ldl -o $@

# Java peers (tests/peers/java/<Name>.java): plain javac from the test group's
# JDK, one class file each (and its inner classes) in $(BUILD)/tests/java/,
# against libclaim's jar.
JAVA_PEER_SRCS := $(wildcard tests/peers/java/*.java)
JAVA_PEER_CLASSES := $(patsubst tests/peers/java/%.java,$(BUILD)/tests/java/%.class,$(JAVA_PEER_SRCS))

$(BUILD)/tests/java/%.class: tests/peers/java/%.java $(LIBCLAIM_JAR) | $(DEPS_LANGS)
	$(call msg,JAVAC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)javac -d $(@D) -cp $(LIBCLAIM_JAR):$(JNA_JAR) $<

.PHONY: java-peers
java-peers: $(JAVA_PEER_CLASSES) $(LIBCLAIM_JAVA_TESTED)

.PHONY: test
test: all $(FUZZ_BINS) $(DEPS_TEST) $(DEPS_LANGS) $(GO_PEER_BINS) $(GOMOD_PEER_BINS) $(JAVA_PEER_CLASSES) $(LIBCLAIM_JAVA_TESTED) \
	$(NODE_ADDON)
	$(Q)./scripts/run-tests.sh $(BUILD)

.PHONY: demo
demo: all $(DEPS_DEMO) $(GOMOD_PEER_BINS) $(JAVA_PEER_CLASSES)
	$(Q)./scripts/demo.sh $(BUILD)

.PHONY: bench
bench: all $(DEPS_BENCH) $(DEPS_LANGS) $(GO_PEER_BINS) $(GOMOD_PEER_BINS) $(JAVA_PEER_CLASSES) \
	$(NODE_ADDON)
	$(Q)./scripts/bench.sh $(BUILD)
	$(Q)./scripts/bench-go.sh $(BUILD)

compile_commands.json: FORCE
	$(Q)$(MAKE) clean >/dev/null
	$(Q)bear -- $(MAKE) all

.PHONY: install
install: all
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/claimd
	install -m 0755 $(BUILD)/claimd $(DESTDIR)$(PREFIX)/sbin/claimd
	install -m 0755 $(BUILD)/claimctl $(DESTDIR)$(PREFIX)/bin/claimctl
	$(if $(LAB_SRCS),install -m 0755 $(BUILD)/claimlab $(DESTDIR)$(PREFIX)/bin/claimlab)
	install -m 0644 $(BUILD)/libclaim.a $(DESTDIR)$(PREFIX)/lib/libclaim.a
	install -m 0755 $(BUILD)/libclaim.so $(DESTDIR)$(PREFIX)/lib/libclaim.so.0
	ln -sf libclaim.so.0 $(DESTDIR)$(PREFIX)/lib/libclaim.so
	install -m 0644 user/libclaim/claim.h user/libclaim/claim_types.h \
		$(DESTDIR)$(PREFIX)/include/claimd/
	install -m 0644 $(BUILD)/libclaim.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/libclaim.pc
	install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR) $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/share/claimd/prometheus
	install -m 0644 $(BUILD)/claimd.service $(DESTDIR)$(SYSTEMD_UNIT_DIR)/claimd.service
	install -m 0644 $(MANPAGES) $(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 0644 scripts/prometheus/*.yml $(DESTDIR)$(PREFIX)/share/claimd/prometheus/
	install -d $(DESTDIR)$(PREFIX)/$(PY_SITE)/libclaim
	install -m 0644 python/libclaim/*.py $(DESTDIR)$(PREFIX)/$(PY_SITE)/libclaim/
	$(if $(wildcard $(LIBCLAIM_JAR)),install -d $(DESTDIR)$(PREFIX)/share/java && \
		install -m 0644 $(LIBCLAIM_JAR) $(DESTDIR)$(PREFIX)/share/java/libclaim.jar)

.PHONY: clean
clean:
	$(call msg,CLEAN,build)
	$(Q)rm -rf build build-san

.PHONY: FORCE
FORCE:

# Every .d under the build directory, however deep its source's folder
# (user/claimd/probes/go/, ...): a changed header rebuilds what includes it.
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
