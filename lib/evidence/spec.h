/* The run spec: what the guest supervisor runs, sent right after the host
 * hello (guest/protocol.h, AIRLOCK_SPEC_*).
 *
 * The host is trusted and builds the spec; the checks here catch a caller's
 * mistake (an empty argv, a path that is not absolute, a value the wire
 * cannot carry) before a VM is booted for it, with an error naming the
 * field. */
#pragma once

#include "../airlock-macros.h"

G_BEGIN_DECLS

#define AIRLOCK_RUN_SPEC_ERROR (airlock_run_spec_error_quark ())
typedef enum {
  AIRLOCK_RUN_SPEC_ERROR_INVALID,   /* a field the guest would refuse */
  AIRLOCK_RUN_SPEC_ERROR_TOO_LARGE, /* a value or the whole spec does not fit */
} AirlockRunSpecError;

AIRLOCK_PUBLIC GQuark airlock_run_spec_error_quark (void);

typedef struct {
  const char *const *argv;   /* NULL-terminated, at least argv[0] (the program, a guest path) */
  const char *const *envp;   /* NULL-terminated "NAME=VALUE"; the whole environment (NULL: empty) */
  const char *cwd;           /* absolute; NULL: "/" (the guest's default, not sent) */
  guint32 uid, gid;
  const guint32 *groups;     /* supplementary groups, @n_groups of them */
  gsize n_groups;
  const char *root;          /* absolute guest path of the workload's root (mandatory) */
  guint timeout_ms;          /* > 0: the guest ends the run after this long */
  const char *hostname;      /* NULL: "airlock" (the guest's default, not sent) */
  const char *root_disk;     /* serial of the virtio disk the guest mounts read-only at
                              * @root (an image's rootfs), or NULL: @root is a guest path */
  const char *user;          /* the image's User, resolved by the guest in the workload's
                              * /etc/passwd and /etc/group (overrides uid/gid/groups), or NULL */
  gboolean stdio;            /* the workload's stdio travels on the stdio port */
  gboolean controls;         /* run the negative-control probe first, in the same boot
                              * (guest/probe-controls.h; its events carry phase CONTROLS) */
  guint64 clock_ns;          /* > 0: the guest sets CLOCK_REALTIME to this (ns since the
                              * epoch) before anything runs (`airlock replay`) */
  /* With @stdio: the workload's stdio is a pseudo-terminal of @tty_rows x
   * @tty_cols (0: unknown) made in its own devpts, its controlling
   * terminal; its output arrives as one stdout stream and the host may
   * resize it (airlock_vm_send_winsize()). */
  gboolean tty;
  guint16 tty_rows, tty_cols;
  /* Absolute guest directory of airlock's static shell (bin/sh), or NULL:
   * when argv[0] (then absolute) is no executable file in the workload's
   * root, the guest binds it read-only at /.airlock and runs
   * /.airlock/bin/sh instead (`airlock shell`). */
  const char *shell_dir;
  /* The guest's clock is warped (QEMU -icount shift=2,sleep=off; the VM
   * layer sets it with AirlockVmOptions.clock_warp): @timeout_ms is a limit
   * of guest time, the guest's heartbeats answer the host's ticks, and the
   * host's stop at its wall-time limit ends the workload (protocol.h,
   * AIRLOCK_SPEC_WARP). */
  gboolean warp;
  /* The guest's network is frames on AIRLOCK_PORT_NET instead of a NIC
   * (set by the VM layer for a remote hypervisor, whose QEMU cannot reach
   * the sinkhole's socket on this host). */
  gboolean net_port;
  /* The signal a time limit sends every process of the workload before the
   * grace in which it may end (AIRLOCK_SPEC_STOP_SIGNAL): the image's
   * StopSignal, 1..64; 0: SIGTERM (the guest's default, not sent). */
  int stop_signal;
} AirlockRunSpec;

/* Encodes @spec as the TLVs that follow the host hello, in the order
 * protocol.h lists the tags (ARG…, ENV…, CWD, UID, GID, GROUPS, ROOT,
 * TIMEOUT_MS, HOSTNAME, …, TTY, SHELL, WARP).  Checks: argv non-empty with a
 * non-empty argv[0], root set and absolute, cwd absolute when set, every env
 * entry NAME=VALUE with a non-empty NAME, timeout_ms > 0, tty only with
 * stdio, shell_dir and then argv[0] absolute, each string at most 65535
 * bytes (a TLV's length), the groups at most 65535 bytes, and the whole
 * spec at most AIRLOCK_SPEC_MAX bytes.
 *
 * Returns the bytes (transfer full), or NULL with @error set
 * (AIRLOCK_RUN_SPEC_ERROR) naming the field. */
AIRLOCK_PUBLIC GBytes *airlock_run_spec_encode (const AirlockRunSpec *spec, GError **error);

G_END_DECLS
