# Release builds. `make dist` cross-compiles cgcat for the supported
# platforms into dist/ with archives and SHA-256 checksums.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64

.PHONY: build dist cross clean release

build:
	go build -ldflags "$(LDFLAGS)" -o bin/cgcat ./cmd/cgcat

# cross builds and vets every platform (CI runs this).
cross:
	@for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		echo "== $$os/$$arch"; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 go build -o /dev/null ./cmd/cgcat || exit 1; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 go vet ./cmd/cgcat/ ./local/... ./server/... ./outbox/... ./projection/... ./gbrain/ || exit 1; \
	done

dist: clean
	@mkdir -p dist
	@for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		name=cgcat_$(VERSION)_$${os}_$${arch}; \
		mkdir -p dist/$$name; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o dist/$$name/cgcat$$ext ./cmd/cgcat || exit 1; \
		cp README.md dist/$$name/; \
		if [ $$os = windows ]; then (cd dist && zip -qr $$name.zip $$name); \
		else tar -C dist -czf dist/$$name.tar.gz $$name; fi; \
		rm -rf dist/$$name; \
	done
	@cd dist && sha256sum cgcat_* > SHA256SUMS && cat SHA256SUMS

# release builds the archives for the five platforms (README, man pages and
# completions inside), MCP bundles, SHA256SUMS, and from them the Homebrew
# formula, the Scoop manifest and server.json, under dist/. Offline; it
# publishes nothing (packaging/release).
release:
	go run ./packaging/release -version $(VERSION) -commit $(COMMIT) -date $(DATE) -out dist

clean:
	rm -rf dist
