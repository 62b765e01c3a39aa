//go:build !unix

package main

import (
	"log"
	"time"
)

func runLive(bin, cfg, root, data string, events, bulk, storm int, idle time.Duration) {
	log.Fatal("live: this benchmark stops and resumes a process with signals: Unix only")
}
