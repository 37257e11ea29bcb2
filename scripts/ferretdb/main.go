// Command ferretdb runs the embeddable FerretDB v1 with its SQLite backend.
//
// `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2` builds a binary that panics at
// start, because the tagged module lacks its generated build/version/version.txt. Embedding the
// supported package from a main module of our own skips that check, and gives us exactly the
// flags the project needs: a loopback listener and a data directory. Telemetry is disabled by the
// embedded package itself.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	dataDir := flag.String("sqlite-dir", "", "existing directory for the SQLite databases (required)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb: --sqlite-dir is required")
		os.Exit(2)
	}
	if st, err := os.Stat(*dataDir); err != nil || !st.IsDir() {
		fmt.Fprintf(os.Stderr, "ferretdb: --sqlite-dir %q must be an existing directory\n", *dataDir)
		os.Exit(2)
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: bad --log-level: %v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dataDir + "/",
		Logger:    logger,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger.Warn("ferretdb listening", "addr", *listen, "data", *dataDir)
	if err := f.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}
}
