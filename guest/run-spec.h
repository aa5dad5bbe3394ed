/* The run spec the host sends after its hello (AIRLOCK_SPEC_* TLVs in
 * protocol.h), as the supervisor reads it.
 *
 * Apart from supervisor.c so that the parser, which takes bytes from the
 * host side of the channel, is plain C with no side effect but its own
 * string buffer: it builds for the host too, where tests/fuzz/fuzz-guest-spec.c
 * fuzzes it. */
#ifndef AIRLOCK_RUN_SPEC_H
#define AIRLOCK_RUN_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SPEC_MAX_ARGS 1024
#define SPEC_MAX_ENV 1024
#define SPEC_MAX_GROUPS 64

struct run_spec {
  char *argv[SPEC_MAX_ARGS + 1];
  size_t argc;
  char *envp[SPEC_MAX_ENV + 1];
  size_t envc;
  char *cwd;
  char *root;
  char *hostname;
  char *root_disk;         /* serial of the disk to mount at root, or NULL */
  char *user;              /* resolved in the workload's root, or NULL */
  bool stdio;              /* stdio on AIRLOCK_PORT_STDIO */
  bool controls;           /* run the negative controls first */
  uint32_t uid, gid;
  gid_t groups[SPEC_MAX_GROUPS];
  size_t n_groups;
  uint32_t timeout_ms;
  bool have_clock;
  uint64_t clock_ns;       /* CLOCK_REALTIME to set first */
  bool tty;                /* the workload's stdio is a pseudo-terminal (needs stdio) */
  uint16_t tty_rows, tty_cols;
  char *shell_dir;         /* airlock's static shell, bound when argv[0] is missing, or NULL */
  bool warp;               /* the clock is warped: timeout_ms is guest time, heartbeats
                            * answer the host's ticks, its stop ends the workload */
  bool net_port;           /* the network is AIRLOCK_PORT_NET, relayed by PID 1 (net-port.c) */
  int stop_signal;         /* sent to the workload at a time limit: always set (parse_spec's
                            * default SIGTERM; the controls' spec sets it too) */
};

/* Formats a reason into @error (@size bytes, truncated) and returns -EINVAL. */
int spec_fail (char *error, size_t size, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Parses the @len bytes of @spec into @s.  Its strings are NUL-terminated
 * copies in one static buffer, so they stay valid until the next call (the
 * supervisor parses one spec per boot).  Returns 0, or -EINVAL with the
 * reason in @error: a TLV cut short or unknown, a string holding a NUL,
 * a field of the wrong size, too many arguments, environment entries or
 * groups, or a spec the supervisor cannot run (no argv, no absolute root,
 * no timeout, ...). */
int parse_spec (const uint8_t *spec, size_t len, struct run_spec *s, char *error,
                size_t error_size);

#endif /* AIRLOCK_RUN_SPEC_H */
