/* Reading an evidence bundle as recorded, for people (`airlock show`):
 * what its manifest, verdict.json, events.jsonl, network.jsonl and
 * console.log say, as plain data.  Nothing is checked here — that is airlock_bundle_verify()'s
 * job — so a bundle that is INCOMPLETE, lacks files or holds a file that
 * does not parse is read as far as it goes, and what is missing is listed.
 *
 * A bundle may come from anywhere: every file is opened without following
 * symlinks and read with a bound, every JSON value is type-checked, and
 * every string taken from a file is made safe to print
 * (airlock_evidence_escape_bytes()) unless it already is — which the
 * writer's own strings always are. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

#include "bundle-network.h"

G_BEGIN_DECLS

/* One system call of the workload (events.jsonl: kind "syscall", phase
 * "workload", not execve/execveat), in the columns `airlock run` prints. */
typedef struct {
  guint64 seq;
  char *exe;                /* or NULL */
  gboolean has_pid;
  guint32 pid;              /* in the workload's pid namespace when recorded (nspid), else the guest's */
  char *syscall;            /* "connect"; "i386:connect" for a foreign ABI */
  char *socket;             /* "inet/stream/tcp", or NULL */
  char *destination;        /* "198.51.100.80:80", "? (does not decode)", or NULL */
  gboolean has_port;
  guint16 port;
  /* The destination as an IP address, when it is one. */
  int dest_family;          /* AF_INET, AF_INET6, or 0 */
  guint8 dest_address[16];  /* network order: 4 bytes for AF_INET */
  GStrv dns_names;          /* the DNS questions' names, in order; never NULL */
  char *action;             /* "continue", "emulate", "deny" */
  char *deny_reason;        /* "raw-socket", …, or NULL */
  char *outcome;            /* "sent", "EINPROGRESS", "denied: raw-socket", … */
  /* An egress attempt: the call names a destination, or was denied (a
   * clone3 denial aside: every glibc thread start makes one; the verdict
   * does not count it either).  A socket() call is not one. */
  gboolean attempt;
} AirlockBundleCall;

/* One execve/execveat of the workload. */
typedef struct {
  guint64 seq;
  gboolean has_nspid, has_pid, has_ppid;
  guint32 nspid, pid, ppid; /* the workload's namespace; the guest's pid and ppid */
  char *path;               /* what it executes, or NULL */
  GStrv argv;               /* the argv it passes, or NULL */
  char *caller;             /* the executable making the call, or NULL */
} AirlockBundleProcess;

/* One negative control (verdict.json controls.each). */
typedef struct {
  char *name;
  char *key;
  gboolean supervisor;      /* the supervisor recorded it */
  gboolean capture;         /* and it is in the capture */
} AirlockBundleControl;

typedef struct {
  char *dir;
  char *arch;               /* the manifest's, or NULL */
  /* FALSE: manifest.json is missing or unreadable: the bundle cannot be
   * read as one, and only incomplete, missing, problems and console_tail
   * say anything. */
  gboolean has_manifest;
  char *incomplete;         /* INCOMPLETE's text (escaped, newlines kept), or NULL */
  GPtrArray *missing;       /* char *: files the bundle lacks, each "NAME" */
  GPtrArray *problems;      /* char *: files that are there but cannot be read, "NAME: why" */
  GPtrArray *present;       /* char *: the file names in the directory, sorted */

  /* manifest.json: inputs and run.  Each NULL when not recorded. */
  char *reference, *index_digest, *manifest_digest, *config_digest;
  char *kernel_release, *kernel_sha256, *initramfs_sha256;
  char *supervisor_sha256, *supervisor_build_id;
  /* As airlock_recorder_to_string() says it: "seccomp", "bpf-lsm+seccomp"
   * or "bpf-kprobe+seccomp"; NULL when the manifest does not say. */
  char *supervisor_recorder;
  char *accel;
  gboolean has_complete, complete;
  char *incomplete_reason;  /* run.reason */
  char *pcap_error;         /* run.pcap_error: why there is no capture */
  char *started, *finished;

  /* net.pcap: present as a regular file. */
  gboolean has_pcap;
  guint64 pcap_size;

  /* verdict.json.  verdict NULL when unknown. */
  char *verdict;
  GPtrArray *reasons;       /* char * */
  GPtrArray *unattributed;  /* char *: the reasons that start "unattributed egress" */
  GPtrArray *controls;      /* AirlockBundleControl * */
  gboolean has_controls;
  guint controls_observed, controls_total;

  /* events.jsonl. */
  gboolean has_events;
  GPtrArray *calls;         /* AirlockBundleCall *, in seq order */
  GPtrArray *processes;     /* AirlockBundleProcess * */
  char *workload_exit;      /* "exited 0", or NULL when not recorded */

  /* network.jsonl: the sinkhole's records, read (not held against the
   * capture: that is verify), the negative controls' marked from
   * verdict.json; NULL when the bundle has none or it does not read (a
   * problem then).  sinkhole_error: the manifest's reason for having none
   * (run.sinkhole_error), NULL in a bundle written before the sinkhole. */
  AirlockNetworkReport *network;
  /* The same records as read (names handed out per address, each
   * connection's SNI and Host), for `airlock policy suggest`; NULL as
   * network is. */
  AirlockSinkholeLog *sinkhole_log;
  char *sinkhole_error;

  /* console.log: its last lines, escaped (no control characters). */
  GPtrArray *console_tail;  /* char * */
  guint64 console_size;
} AirlockBundleView;

/* Reads the bundle at @dir: the last @console_lines lines of console.log
 * (at most the last 64 KiB of it) and everything listed above.  Never
 * fails: what cannot be read is in ->missing or ->problems, and
 * ->has_manifest says whether there was a bundle to read at all.  Free
 * with airlock_bundle_view_free(). */
AIRLOCK_PUBLIC AirlockBundleView *airlock_bundle_read (const char *dir, guint console_lines);
/* Accepts NULL. */
AIRLOCK_PUBLIC void airlock_bundle_view_free (AirlockBundleView *view);

/* Reads the file @name (a name, no '/') of the bundle at @dir as show
 * and verify read them: a regular file, never through a symlink, never a
 * FIFO (which would wait for a writer), and within the bound verify
 * applies to it (network.jsonl: AIRLOCK_SINKHOLE_LOG_MAX; any other: the
 * derived files' bound).  A bundle may come from anywhere.  Returns its
 * bytes (a NUL follows them, not counted), or NULL with @error set
 * (AIRLOCK_BUNDLE_ERROR_INVALID) naming the file and why. */
AIRLOCK_PUBLIC GBytes *airlock_bundle_read_file (const char *dir, const char *name, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockBundleView, airlock_bundle_view_free)

G_END_DECLS
