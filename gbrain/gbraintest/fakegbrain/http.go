package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cgcat/cgcat/gbrain/gbraintest/internal/fakeserver"
)

// serveHTTP is `serve --http [--port N] [--bind ADDR] [--token-ttl S]
// [--public-url URL]`; the handler is fakeserver's.
func serveHTTP(srv *fakeserver.Server, args []string) error {
	port, bind, publicURL, ttl := 3131, "127.0.0.1", "", 3600
	for i := 0; i < len(args); i++ {
		val := func() string {
			if i+1 >= len(args) {
				fmt.Fprintf(os.Stderr, "[gbrain] %s needs a value\n", args[i])
				os.Exit(2)
			}
			i++
			return args[i]
		}
		var err error
		switch args[i] {
		case "--http":
		case "--port":
			port, err = strconv.Atoi(val())
		case "--bind":
			bind = val()
		case "--public-url":
			publicURL = val()
		case "--token-ttl":
			ttl, err = strconv.Atoi(val())
			if err == nil && ttl <= 0 {
				err = errors.New("must be positive")
			}
		default:
			err = fmt.Errorf("unknown flag %s", args[i])
		}
		if err != nil {
			return fmt.Errorf("%s: %w", args[i], err)
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	port = ln.Addr().(*net.TCPAddr).Port
	issuer := fmt.Sprintf("http://localhost:%d/", port)
	if publicURL != "" {
		issuer = strings.TrimSuffix(publicURL, "/") + "/"
	}
	h := srv.HTTPHandler(fakeserver.HTTPOptions{TokenTTL: ttl, Issuer: issuer,
		LimitMax: envInt("GBRAIN_OAUTH_TOKEN_RATE_LIMIT_MAX", 50), LimitWindow: time.Duration(envInt("GBRAIN_OAUTH_TOKEN_RATE_LIMIT_WINDOW_MS", 15*60*1000)) * time.Millisecond})
	base := fmt.Sprintf("http://%s", ln.Addr())
	fmt.Fprintf(os.Stderr, "[gbrain] %s serving MCP over HTTP at %s/mcp (issuer %s, token ttl %ds)\n", fakeserver.ServerVersion, base, issuer, ttl)
	if ready := os.Getenv("GBRAIN_FAKE_READY"); ready != "" {
		if err := os.WriteFile(ready+".tmp", []byte(base), 0o600); err != nil {
			return err
		}
		if err := os.Rename(ready+".tmp", ready); err != nil {
			return err
		}
	}
	return (&http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
