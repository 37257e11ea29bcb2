// Command ferretdb runs the embeddable FerretDB v1 on PostgreSQL (--postgresql-url) or, without
// one, on SQLite (--sqlite-dir).
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
	postgresURL := flag.String("postgresql-url", "", "PostgreSQL connection string: the PostgreSQL backend")
	dataDir := flag.String("sqlite-dir", "", "existing directory for the SQLite databases: the SQLite backend")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	if (*postgresURL == "") == (*dataDir == "") {
		fmt.Fprintln(os.Stderr, "ferretdb: exactly one of --postgresql-url and --sqlite-dir is required")
		os.Exit(2)
	}
	if *dataDir != "" {
		if st, err := os.Stat(*dataDir); err != nil || !st.IsDir() {
			fmt.Fprintf(os.Stderr, "ferretdb: --sqlite-dir %q must be an existing directory\n", *dataDir)
			os.Exit(2)
		}
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: bad --log-level: %v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	config := &ferretdb.Config{Listener: ferretdb.ListenerConfig{TCP: *listen}, Logger: logger}
	if *postgresURL != "" {
		config.Handler, config.PostgreSQLURL = "postgresql", *postgresURL
	} else {
		config.Handler, config.SQLiteURL = "sqlite", "file:"+*dataDir+"/"
	}
	f, err := ferretdb.New(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger.Warn("ferretdb listening", "addr", *listen, "handler", config.Handler)
	if err := f.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}
}
