# The README's first two commands: `make run` and `make test` (then `make fuzz`). None needs a
# running database: without DATABASE_URL they start a private PostgreSQL from the
# machine's binaries (installing the package when missing) and stop it after.
GO ?= go
export ROUTER_DEMO_KEY ?= demo-key

.PHONY: run test race-toolchain build vet bench fuzz chaos

# The router runs as bin/router, exec'd by the recipe's shell: make's own
# child, it is the process make signals when it is told to stop (SIGTERM),
# and it drains and stops its PostgreSQL. Under `go run`, make's SIGTERM ended
# `go run` alone and left the router running, orphaned, on its ports.
run: build
	exec ./bin/router serve --config demo/router.yaml

test: race-toolchain build
	exec ./bin/router localdb -- $(GO) test -race -count=1 -timeout 15m ./...

# go test -race needs cgo, and cgo a C compiler and the C library's headers,
# which a minimal Debian image lacks: installed from Debian's packages when
# missing and root (as localdb installs PostgreSQL), else a clear error before
# any test runs. CC may carry arguments (CC="ccache gcc").
race-toolchain:
	@set -- $$($(GO) env CC); command -v "$$1" >/dev/null 2>&1 && \
	  echo '#include <stdlib.h>' | $$($(GO) env CC) -E - >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make test: go test -race needs a C compiler (cgo); installing Debian's gcc and libc6-dev" >&2; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null; \
	  else \
	    echo "make test: go test -race needs a C compiler (cgo) and none was found: install one (sudo apt-get install gcc libc6-dev) and run make test again" >&2; \
	    exit 1; \
	  fi; }

build:
	$(GO) build -o bin/router ./cmd/router

vet:
	$(GO) vet ./...

# Benchmarks (SPEC §14), one run of about 3 minutes: its own durable PostgreSQL (an
# exported DATABASE_URL is not used), a
# loopback mock provider, the router binary as processes; writes report.md and charts
# to bench/results/latest/ (in git) and the whole run, profiles included, to
# .local/bench-runs/<time>/ (not in git). Flags: go run ./bench/cmd/routerbench -h.
# COMPARE=REV adds a before/after section: the router built at git revision REV
# and this tree's, alternating run by run in the same run (docs/performance.md);
# COMPARE_CHUNKS=N has the mock stream each answer of that section in N chunks,
# as a provider streams tokens (the per-token path; every other section: one).
COMPARE ?=
COMPARE_CHUNKS ?=
bench: build
	exec env -u DATABASE_URL ./bin/router localdb --durable --dir .local/pg-bench -- $(GO) run ./bench/cmd/routerbench $(if $(COMPARE),-compare $(COMPARE)) $(if $(COMPARE_CHUNKS),-compare-chunks $(COMPARE_CHUNKS))

# Fuzzing (Go native): each target below for FUZZTIME. Their seed corpora (and any
# failing inputs kept in testdata/fuzz) already run in `make test`.
FUZZTIME ?= 20s
FUZZ_TARGETS = \
	./internal/store:FuzzFingerprint \
	./internal/api:FuzzParseJobBody \
	./internal/api:FuzzProblemJSON \
	./internal/chat:FuzzChatRequest \
	./internal/chat:FuzzScanToolCalls \
	./internal/prompt:FuzzRender \
	./internal/prompt:FuzzEscapeDelimiters \
	./internal/providers:FuzzOpenAIStream \
	./internal/providers:FuzzChunkDecodeMatchesEncodingJSON \
	./internal/providers:FuzzChatBody \
	./internal/race:FuzzDecisionsJSON \
	./internal/jsonenc:FuzzAppendString \
	./internal/jsonenc:FuzzAppendRaw \
	./internal/jsonenc:FuzzAppendFloat \
	./internal/contract:FuzzParseJSONMatchesEncodingJSON \
	./internal/jsontext:FuzzSanitize \
	./internal/jsontext:FuzzCheckNumbersAgreesWithFullScan
fuzz: build
	exec ./bin/router localdb -- sh -c 'for t in $(FUZZ_TARGETS); do \
		echo "== $$t"; $(GO) test -run "^$$" -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}" || exit 1; done'

# The fault-injection run (SPEC §17, docs/reliability.md), long form: three router
# replicas on a private PostgreSQL under steady load while replicas are killed,
# PostgreSQL restarts and providers drop or hang connections, for CHAOS_DURATION;
# then the history checker; the figures go to .local/chaos-report.md. Loopback
# only. `make test` runs one round of it.
CHAOS_DURATION ?= 5m
chaos:
	mkdir -p .local
	CHAOS_DURATION=$(CHAOS_DURATION) CHAOS_REPORT=$(CURDIR)/.local/chaos-report.md \
		$(GO) test -race -count=1 -timeout 60m -run '^TestChaos$$' -v ./internal/chaos/
	@echo "figures: .local/chaos-report.md"
