/* The bounds of one run, in one table: what the live run keeps and what
 * `airlock verify` (and `airlock show`) read back are the same numbers, so
 * a bundle that a run wrote always fits what verify accepts.
 *
 * A run that crosses a bound is never a pass: the evidence channel ends
 * INCONCLUSIVE with an anomaly naming the bound (AIRLOCK_ANOMALY_BOUND), a
 * capture over its bound is refused with a reason (the verdict then has no
 * capture), and stdio or console past theirs are cut and marked truncated.
 * The bundle that run writes stays within these bounds, so it still
 * verifies, with its inconclusive verdict.
 *
 * Internal (not installed). */
#pragma once

#include <glib.h>

/* Evidence stream bytes one run keeps (the channel, evidence.bin).  The
 * stream is what the guest sends; without a bound a workload making calls
 * with long arguments grows the host's memory and the bundle without end.
 * 64 MiB is several hundred thousand records, far above what a gated
 * entrypoint makes in its time limit; reaching it makes the channel
 * inconclusive.  Bytes past it are not kept (or written): the run's
 * verdict is already decided. */
#define AIRLOCK_BOUND_EVIDENCE_STREAM ((gsize) 64 * 1024 * 1024)

/* How many bytes of a derived file (frames.jsonl, events.jsonl) one byte
 * of evidence stream can become, at most: a frame's line in frames.jsonl
 * is a few hundred bytes for a frame of at least the header's size, and a
 * guest byte in events.jsonl is escaped (\xNN, then JSON) and may appear in
 * more than one field.  tests/unit/test-evidence.c measures the worst
 * streams it knows against this factor. */
#define AIRLOCK_BOUND_DERIVED_PER_STREAM_BYTE 16

/* Derived files verify reads whole (frames.jsonl, events.jsonl,
 * verdict.json, summary.md, the in-toto statement): what a run at the
 * stream bound can write, so a bundle the live run wrote always verifies.
 * Derived from the stream bound, never set on its own. */
#define AIRLOCK_BOUND_DERIVED_FILE \
  (AIRLOCK_BOUND_EVIDENCE_STREAM * AIRLOCK_BOUND_DERIVED_PER_STREAM_BYTE)

/* The capture (net.pcap) airlock reads after a run.  The guest decides how
 * much it sends; QEMU writes every frame.  Over the bound, the capture is
 * refused without being read (the verdict then cannot pass: no capture
 * to cross-check); the file's size is checked before a byte is read. */
#define AIRLOCK_BOUND_CAPTURE ((gsize) 256 * 1024 * 1024)

/* Workload stdout and stderr kept, each: a workload flooding its output
 * must not fill the memory or the disk of the machine that judges it.
 * Past it the stream is cut and marked truncated (output is not
 * evidence). */
#define AIRLOCK_BOUND_STDIO ((gsize) 16 * 1024 * 1024)

/* The serial console (kernel log) kept, like stdio. */
#define AIRLOCK_BOUND_CONSOLE ((gsize) 8 * 1024 * 1024)

/* manifest.json: a list of the bundle's files and inputs, small whatever
 * the run did; the bound only keeps a wrong file from being read whole. */
#define AIRLOCK_BOUND_MANIFEST ((gsize) 64 * 1024 * 1024)
