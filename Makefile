# baton's entry points. `make help` lists them; README.md says which two a newcomer runs.

GO      ?= go
BIN     ?= bin
SEEDS   ?= 100
FUZZTIME ?= 20s
# COMMIT stamps batonctl (`batonctl version`, results.json's "commit"): go run
# records no version control information, and go build none with
# -buildvcs=false. Empty outside git.
COMMIT  ?= $(shell c=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null || c=$$c-dirty; echo $$c; })
LDFLAGS  = -X main.commit=$(COMMIT)

.PHONY: help build test sim gates mutants localbed localbed-sanity realbed realbed-test realbed-down webapps-test vmtest images crds lint bench fuzz clean controlplane

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build every package and the five binaries into bin/
	$(GO) build ./...
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

controlplane: ## build (or find cached) kube-apiserver, etcd and kubectl
	@bash ci/controlplane/build.sh

# The test control plane (kube-apiserver, etcd, kubectl v1.37.2) is built from
# source into ~/.cache/baton on first use; warm, finding it costs well under a second.
# The tests also need xfsprogs, btrfs-progs, chromium and a few more Debian
# packages: ci/packages.sh installs what is missing (as root) or names it.
test: ## run every test, including the envtest suites on a real API server
	@bash ci/packages.sh
	@assets=$$(bash ci/controlplane/build.sh) && \
	  echo "KUBEBUILDER_ASSETS=$$assets" && \
	  KUBEBUILDER_ASSETS=$$assets $(GO) test -count=1 ./... && \
	  echo "seeded bugs (-tags baton_bugs): the scenarios must catch every one (internal/bugs)" && \
	  $(GO) test -count=1 -tags baton_bugs -run 'Catches|Replay|Miss|Switch|Lacks' ./sweep/ ./internal/bugs/ ./cmd/batonctl/

sim: ## sweep every scenario over SEEDS seeds on the simulation bed; report in out/sim
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/batonctl sim sweep --scenarios all --seeds $(SEEDS) --out out/sim

gates: ## run the CI gates of ci/gates.yaml (scenario sweeps on the simulation); reports in out/ci
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/batonctl ci gates --file ci/gates.yaml --out out/ci

# `make mutants` swaps one operator at a time in the DR logic (gremlins'
# mutations) and judges each mutant by its package's tests and by a chaos
# sweep of every scenario over MUTANT_SEEDS seeds, built from the mutated
# tree; see docs/mutants.md. MUTANTS picks the packages (empty: all of the DR
# logic), e.g. MUTANTS="storage/chain csi:replication.go". Verdicts are
# cached in ~/.cache/baton/mutants, so a rerun judges only what changed. It
# runs niced, and is no part of make test or CI.
MUTANTS      ?=
MUTANT_SEEDS ?= 2
MUTANT_FLAGS ?=
mutants: ## judge mutants of the DR logic by unit tests and by the sweep; report in out/mutants
	@gremlins=$$(bash ci/mutants/gremlins.sh) && \
	  $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/batonctl && \
	  nice -n 15 $(BIN)/batonctl mutants --gremlins $$gremlins --seeds $(MUTANT_SEEDS) --out out/mutants $(MUTANT_FLAGS) $(MUTANTS)

# The local bed needs root (network namespaces, loop devices, btrfs) and the
# control plane; each scenario runs on a bed of its own (about 15 s to start).
# It ends with one line naming the scenarios the bed does not run yet, as
# make realbed does; its exit status is the scenarios' verdict alone (a
# target red whatever the run did would tell a user nothing). What each bed
# lacks is pinned by cmd/batonctl's tests; see docs/localbed.md.
LOCALBED_SCENARIOS ?= wordpress/relocate wordpress/failover
localbed: ## run the scenarios on real kube-apiservers, binaries and network namespaces (root)
	@assets=$$(bash ci/controlplane/build.sh) && \
	  $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/baton-controller ./cmd/baton-node ./cmd/baton-csi ./cmd/batonctl && \
	  KUBEBUILDER_ASSETS=$$assets $(BIN)/batonctl scenario run $(LOCALBED_SCENARIOS) --bed local --bin $(BIN) --out out/localbed && \
	  { lacking=$$($(BIN)/batonctl scenario lacking 2>&1) || echo "lacking: $${lacking#batonctl: }"; }

# The strict csi-sanity (csi/csisanity) against site-a's real driver, operator
# and node agent on the local bed (root): 4-6 minutes a run.
SANITY_COUNT ?= 1
localbed-sanity: ## run the strict csi-sanity against the local bed's driver (root)
	@assets=$$(bash ci/controlplane/build.sh) && \
	  BATON_LOCALBED_SANITY=1 KUBEBUILDER_ASSETS=$$assets $(GO) test -count=$(SANITY_COUNT) -timeout 0 -v -run TestSanityOnTheLocalBed ./bed/local/

# The real bed needs root (a private dockerd, debootstrap, loop devices). Cold it
# builds kind, the node image and baton's image into ~/.cache/baton/realbed;
# it leaves three kind clusters running (REALBED_SCENARIOS= skips the
# scenarios); see docs/realbed.md.
REALBED_SCENARIOS ?= wordpress/failover gitea/relocate
realbed: ## kind hub + two sites with baton on btrfs, replicating to each other; run REALBED_SCENARIOS on them (root)
	@REALBED_SCENARIOS="$(REALBED_SCENARIOS)" REALBED_OUT=out/realbed bash ci/realbed/realbed.sh

# The real bed's own tests run stories on the running bed (make realbed first):
# the forced overlap of issue 40, a relocation beside another bed's cut.
# REALBED_TEST_COUNT repeats them.
REALBED_TEST_COUNT ?= 1
realbed-test: ## run the tests that need the running real bed (root; make realbed first)
	BATON_REALBED=1 $(GO) test -count=$(REALBED_TEST_COUNT) -timeout 0 -v -run 'Beside' ./bed/real/

realbed-down: ## tear the real bed down: clusters, network, every loop device its sites attached, firewall rule, private dockerd
	@bash ci/realbed/down.sh

# The real applications' tests need root (debootstrap, the private dockerd).
# Cold, the three images take about 40 minutes (Gitea's cgo build most of it);
# warm, the tests take about 5. Without the images, `make test` skips them.
webapps-test: ## build the real bed's application images, run the driver against them: kill -9 mid-writes, read back (root)
	@bash ci/realbed/apps/images.sh >/dev/null && \
	  assets=$$(bash ci/controlplane/build.sh) && \
	  KUBEBUILDER_ASSETS=$$assets $(GO) test -count=1 -v -timeout 30m ./bed/real/webapps/

# vmtest needs root (debootstrap, chroot) the first time, when it builds the guest
# image into ~/.cache/baton/vmtest; see ci/vmtest/vmtest.sh for what runs where.
vmtest: ## run the backend conformance suites on real ZFS and DRBD in qemu guests
	@bash ci/vmtest/vmtest.sh

# `make images` needs root the first time (debootstrap, the private dockerd of
# ci/realbed/dockerd.sh, which it leaves running); cold it builds
# external-provisioner and csi-addons from the module proxy (about 15 min each).
images: ## build baton's image offline into the private dockerd and print its name (root; see docs/deploy.md)
	@bash ci/realbed/baton-image.sh

# `make crds` runs controller-gen (pinned in go.mod as a tool): CRDs into CRD_DIR,
# deepcopy functions next to the types (or into DEEPCOPY_DIR), and the operator's
# role into RBAC_DIR once RBAC_PATHS names the packages carrying +kubebuilder:rbac
# markers -- enabling RBAC is setting that one variable. It then copies what the
# Helm chart carries into CHART_DIR: baton's CRDs and the operator's role, and
# csi-addons' CRDs and controller-manager role from its module (the version
# ci/realbed/csi-addons.go.mod pins, the one `make images` builds). The
# manifests-are-fresh test in api/v1alpha1 runs this target with every output
# directory in a temp dir.
CONTROLLER_GEN ?= $(GO) tool controller-gen
API_PATHS    = ./api/...
RBAC_PATHS   = ./controllers/site/...
CRD_DIR      ?= deploy/crds
RBAC_DIR     ?= deploy/rbac
DEEPCOPY_DIR ?=
CHART_DIR    ?= deploy/chart/baton
CSI_ADDONS_MODULE = github.com/csi-addons/kubernetes-csi-addons
CSI_ADDONS_VERSION = $(shell awk '$$1 == "require" && $$2 == "$(CSI_ADDONS_MODULE)" {print $$3}' ci/realbed/csi-addons.go.mod)

crds: ## generate CRDs, deepcopy and the operator's RBAC into deploy/, and copy them (and csi-addons') into the chart
	$(CONTROLLER_GEN) object paths=$(API_PATHS) $(if $(DEEPCOPY_DIR),output:object:dir=$(DEEPCOPY_DIR))
	rm -rf $(CRD_DIR) && $(CONTROLLER_GEN) crd paths=$(API_PATHS) output:crd:artifacts:config=$(CRD_DIR)
	$(if $(RBAC_PATHS),rm -rf $(RBAC_DIR) && $(CONTROLLER_GEN) rbac:roleName=baton-controller paths=$(RBAC_PATHS) output:rbac:artifacts:config=$(RBAC_DIR))
	rm -rf $(CHART_DIR)/crds $(CHART_DIR)/files
	install -d $(CHART_DIR)/crds/baton $(CHART_DIR)/crds/csi-addons $(CHART_DIR)/files/rbac $(CHART_DIR)/files/csi-addons
	install -m 0644 $(CRD_DIR)/*.yaml $(CHART_DIR)/crds/baton/
	install -m 0644 $(RBAC_DIR)/role.yaml $(CHART_DIR)/files/rbac/operator-role.yaml
	@test -n "$(CSI_ADDONS_VERSION)" || { echo "make crds: ci/realbed/csi-addons.go.mod pins no $(CSI_ADDONS_MODULE)" >&2; exit 1; }
	$(GO) mod download $(CSI_ADDONS_MODULE)@$(CSI_ADDONS_VERSION)
	addons=$$($(GO) list -m -f '{{.Dir}}' $(CSI_ADDONS_MODULE)@$(CSI_ADDONS_VERSION)) && \
	  install -m 0644 $$addons/config/crd/bases/*.yaml $(CHART_DIR)/crds/csi-addons/ && \
	  install -m 0644 $$addons/config/rbac/role.yaml $(CHART_DIR)/files/csi-addons/manager-role.yaml

lint: ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

bench: ## run the Go benchmarks once each
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz: ## run every fuzz target for FUZZTIME each
	@bash ci/fuzz.sh $(FUZZTIME)

clean: ## remove build outputs (the control-plane cache stays)
	rm -rf $(BIN)
