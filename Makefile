# Build, test and benchmark the suite. `make demo` and `make test` are the two
# commands of the README; CI runs `make test` through .ci/run.

GO      ?= go
BIN     := bin
CMDS    := observe replay calibrate run
GOFLAGS ?=

.PHONY: all build demo test race vet fmt-check bench fuzz clean e2e install-completion pgo image image-test

# Packages whose goroutines the race detector must watch on every CI run;
# `make race` covers the whole tree.
RACE_PKGS := ./internal/cli/... ./internal/httpload/... ./internal/testkit/clitest ./internal/testkit/timingtest ./cmd/observe/... ./internal/live/... ./internal/report/... ./internal/sweep/...

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build $(GOFLAGS) -o $(BIN)/ $(addprefix ./cmd/,$(CMDS))

# The container image of the four binaries (for the fan-out of a sweep,
# README "Capacity planning"): static binaries (CGO off) in /usr/local/bin of
# an image from no base, written by tools/image as one tarball that an OCI
# layout reader, `docker load` and `podman load` all take. Neither a daemon
# nor a registry is needed; push it with `crane push` or load it.
VERSION := $(shell sed -n 's/^const Version = "\(.*\)"/\1/p' internal/cli/app.go)
IMAGE   ?= servesim:$(VERSION)
IMAGE_TAR := $(BIN)/servesim-image.tar
image:
	@mkdir -p $(BIN)/image
	CGO_ENABLED=0 $(GO) build $(GOFLAGS) -o $(BIN)/image/ $(addprefix ./cmd/,$(CMDS))
	$(GO) run ./tools/image build -o $(IMAGE_TAR) -name $(IMAGE) $(addprefix $(BIN)/image/,$(CMDS))

# The image's test: with a working container runtime, load the image and run
# `run --version` in it; without one, check the tarball as a runtime would
# (digests, manifests, the four binaries) and run `run --version` taken out
# of it.
# CONTAINER_RUNTIME=podman (or docker) names the runtime, =none skips it;
# by default the first of podman and docker whose `info` answers is used. A
# runtime that loads the image but may not start containers (a sandbox) is
# said so, the tarball check having passed.
CONTAINER_RUNTIME ?=
image-test: image
	@set -e; rt="$(CONTAINER_RUNTIME)"; [ "$$rt" != none ] || rt=skip; \
	if [ -z "$$rt" ]; then for r in podman docker; do \
	  if command -v $$r >/dev/null && $$r info >/dev/null 2>&1; then rt=$$r; break; fi; done; fi; \
	[ "$$rt" != skip ] || rt=""; \
	$(GO) run ./tools/image check $(IMAGE_TAR) -want $$(echo $(CMDS) | tr ' ' ,) -exec 'run --version'; \
	if [ -n "$$rt" ]; then \
	  $$rt load -i $(IMAGE_TAR); \
	  if ! $$rt run --rm $(IMAGE) run --version; then \
	    echo "image-test: $$rt loaded the image but cannot start containers here (a sandbox); the tarball check above passed"; fi; \
	else echo "image-test: no working container runtime (podman, docker): checked the tarball only"; fi

# The main job on a built-in default: a chatbot preset on Qwen3-14B, one H100.
demo: build
	$(BIN)/run --workload chatbot --rate 20 --num-requests 2000 --format text

# Packages whose tests check the load generator's timing against the clock
# (1 ms bounds): they run after the others, alone, because on 2 cores the
# other packages' test binaries running beside them delay the client and its
# in-process server by milliseconds (seen in CI: TTFT error p50 2.7–10 ms).
TIMING_PKGS := servesim/internal/httpload servesim/cmd/observe servesim/internal/live

test: fmt-check vet
	$(GO) test -count=1 $$($(GO) list ./... | grep -v -x $(addprefix -e ,$(TIMING_PKGS)))
	$(GO) test -count=1 -p 1 $(TIMING_PKGS)
	$(GO) test -race -count=1 $(RACE_PKGS)

race:
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Profile-guided optimisation: `go build` of cmd/run and cmd/replay reads
# the default.pgo beside their main.go, a CPU profile of their own
# benchmarks (the reference workload at 10k-1M requests, the production
# traces). It changes how the compiler inlines and lays out the hot paths,
# never a result. Regenerate it after reshaping the simulator's hot paths.
PGO_OUT := $(BIN)/pgo
pgo:
	@mkdir -p $(PGO_OUT)
	$(GO) test -run '^$$' -bench 'Run/' -benchtime 1x -cpuprofile $(PGO_OUT)/run.prof -o $(PGO_OUT)/run.test ./cmd/run
	$(GO) test -run '^$$' -bench 'Replay/' -benchtime 3x -cpuprofile $(PGO_OUT)/replay.prof -o $(PGO_OUT)/replay.test ./cmd/replay
	$(GO) tool pprof -proto $(PGO_OUT)/run.prof $(PGO_OUT)/replay.prof > $(PGO_OUT)/merged.pgo
	cp $(PGO_OUT)/merged.pgo cmd/run/default.pgo
	cp $(PGO_OUT)/merged.pgo cmd/replay/default.pgo

# A pass of every native fuzz target, FUZZTIME each (CI: 30s), but those
# named in FUZZ_SKIP. Only the packages whose tests hold a Fuzz function are
# listed and built. A failing input is saved under the package's
# testdata/fuzz/ (commit it as a seed). tools/fuzz/run.sh runs each target
# and retries once a run Go ended on its own deadline with nothing found.
FUZZTIME ?= 10s
FUZZ_SKIP ?=
fuzz:
	@start=$$(date +%s); n=0; \
	for dir in $$(grep -l '^func Fuzz' $$(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go') | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h -o '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go | cut -c6-); do \
	    case " $(FUZZ_SKIP) " in *" $$f "*) continue;; esac; \
	    tools/fuzz/run.sh "$(GO)" $(FUZZTIME) $$dir $$f || exit 1; n=$$((n+1)); \
	  done; \
	done; \
	echo "fuzz: $$n targets, $(FUZZTIME) each, in $$(( $$(date +%s) - start )) s"

# The whole loop against a real inference server (Ollama on the CPU, a tiny
# model of ours): builds the server once into a cache folder (~10 min on 2
# cores; e2e/build-ollama.sh), then observe → calibrate fit → replay →
# calibrate, reports in $(E2E_OUT). The server is stopped by its PID (the test
# does it; the trap covers a test that was killed).
E2E_OUT ?= $(CURDIR)/$(BIN)/e2e
e2e: build
	@set -e; ollama=$$(e2e/build-ollama.sh); mkdir -p "$(E2E_OUT)"; \
	trap 'p=$$(cat "$(E2E_OUT)/ollama.pid" 2>/dev/null) && [ -n "$$p" ] && kill -KILL -$$p 2>/dev/null; rm -f "$(E2E_OUT)/ollama.pid"' EXIT; \
	start=$$(date +%s); status=0; \
	SERVESIM_E2E=1 SERVESIM_OLLAMA="$$ollama" SERVESIM_E2E_OUT="$(E2E_OUT)" SERVESIM_BIN="$(CURDIR)/$(BIN)" \
	  $(GO) test -count=1 -v -timeout 15m ./e2e/ || status=$$?; \
	echo "e2e: loop took $$(( $$(date +%s) - start )) s; reports in $(E2E_OUT) (index: $(E2E_OUT)/summary.md)"; \
	exit $$status

# Held-out fidelity on real vLLM runs (testdata/llmservingsim, committed with
# the repository; internal/testkit/shareddata falls back to ../shared/data): each run
# predicted from coefficients fitted on the others, printed as Markdown; the
# same test fails if the figures get worse (internal/fidelity).
.PHONY: fidelity
fidelity:
	@out=$$($(GO) test -count=1 -run '^TestFidelityReport$$' -v ./internal/fidelity/ 2>&1); status=$$?; \
	printf '%s\n' "$$out" | sed -e '/^=== RUN/d' -e '/^--- PASS/d'; exit $$status

# Shell completion (bash, zsh, fish) for the four binaries, each script
# written by its binary (--completion SHELL) into the folders the shells
# search under PREFIX (default ~/.local; bash-completion and fish look there
# by themselves, zsh needs the folder in $$fpath before compinit).
PREFIX              ?= $(HOME)/.local
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR  ?= $(PREFIX)/share/zsh/site-functions
FISH_COMPLETION_DIR ?= $(PREFIX)/share/fish/vendor_completions.d
install-completion: build
	@mkdir -p "$(BASH_COMPLETION_DIR)" "$(ZSH_COMPLETION_DIR)" "$(FISH_COMPLETION_DIR)"
	@set -e; for c in $(CMDS); do \
	  $(BIN)/$$c --completion bash > "$(BASH_COMPLETION_DIR)/$$c.tmp" && mv "$(BASH_COMPLETION_DIR)/$$c.tmp" "$(BASH_COMPLETION_DIR)/$$c"; \
	  $(BIN)/$$c --completion zsh > "$(ZSH_COMPLETION_DIR)/_$$c.tmp" && mv "$(ZSH_COMPLETION_DIR)/_$$c.tmp" "$(ZSH_COMPLETION_DIR)/_$$c"; \
	  $(BIN)/$$c --completion fish > "$(FISH_COMPLETION_DIR)/$$c.fish.tmp" && mv "$(FISH_COMPLETION_DIR)/$$c.fish.tmp" "$(FISH_COMPLETION_DIR)/$$c.fish"; \
	done
	@echo "completion for $(CMDS) installed in $(BASH_COMPLETION_DIR), $(ZSH_COMPLETION_DIR) and $(FISH_COMPLETION_DIR)"
	@echo "zsh: put 'fpath=($(ZSH_COMPLETION_DIR) \$$fpath)' before compinit in ~/.zshrc; bash and fish need nothing more (open a new shell)"
	@echo "the scripts complete the binaries called by a path ending in bin/NAME (bin/run, ./bin/run, $(CURDIR)/$(BIN)/run), never a bare NAME: run, replay, observe and calibrate are words other programs own"

clean:
	rm -rf $(BIN)
