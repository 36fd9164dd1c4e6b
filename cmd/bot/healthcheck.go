package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheckTimeout bounds the whole check: a bot that does not answer
// /healthz within it is not healthy.
const healthcheckTimeout = 3 * time.Second

// healthcheck asks the running bot's health server (http.listen in the
// configuration) for /healthz, or with -ready for /readyz (every gateway
// connected and the store answering): exit 0 on 200, 1 otherwise. It is
// the container image's HEALTHCHECK, which has no curl; deploy/compose.yaml
// uses -ready.
func healthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags, path := newFlags("healthcheck", stderr)
	timeout := flags.Duration("timeout", healthcheckTimeout, "give up after this long")
	ready := flags.Bool("ready", false, "ask /readyz (gateways connected, store answering) instead of /healthz")
	if code, done := parseFlags(flags, args); done {
		return code
	}
	cfg, _, code := loadConfig(*path, stderr)
	if cfg == nil {
		return code
	}
	if cfg.HTTP.Listen == "" {
		fmt.Fprintln(stderr, "bot healthcheck: http.listen is empty: the bot serves no /healthz")
		return exitFail
	}
	url := "http://" + dialAddr(cfg.HTTP.Listen) + "/healthz"
	if *ready {
		url = "http://" + dialAddr(cfg.HTTP.Listen) + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintln(stderr, "bot healthcheck:", err)
		return exitFail
	}
	// No proxy: the bot is on this machine, and a proxy from the
	// environment would answer for it.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "bot healthcheck:", err)
		return exitFail
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) //nolint:errcheck // the status is the answer
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "bot healthcheck: GET %s: status %d\n", url, resp.StatusCode) // not the reason phrase: whatever listens there wrote it
		return exitFail
	}
	fmt.Fprintf(stdout, "ok: %s\n", url)
	return exitOK
}

// dialAddr turns a listen address into one to connect to: an unspecified
// host (0.0.0.0, ::, empty) means this machine's loopback.
func dialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch ip := net.ParseIP(host); {
	case host == "":
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}
