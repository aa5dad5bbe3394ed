/* The supervisor's records, decoded on the host: one AirlockEvent per
 * accepted EVENT frame, with the raw bytes it carried interpreted here
 * (system call names per ABI, sockaddrs by the kernel's rules, DNS
 * questions from UDP datagrams and reassembled TCP streams) and each
 * RESULT attached to the call it belongs to.
 *
 * The frames were checked by the channel (frame.c: tags, sizes, bounds,
 * mandatory tags per kind); what is checked here is what spans frames: a
 * RESULT must refer to an earlier syscall event that has no result yet.
 *
 * Public (in <airlock.h>): the `airlock` command prints runs and bundles
 * through it, as any other client of the library can. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

#include "abi-names.h"
#include "../arch.h"
#include "channel.h"
#include "dns.h"
#include "sockaddr.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define AIRLOCK_EVENT_ERROR (airlock_event_error_quark ())
AIRLOCK_PUBLIC GQuark airlock_event_error_quark (void);

typedef enum {
  AIRLOCK_EVENT_ERROR_MALFORMED,   /* not an EVENT frame, or its TLVs break protocol.h */
  AIRLOCK_EVENT_ERROR_BAD_REF,     /* a RESULT names no earlier syscall event, or one
                                    * that already has its result */
  AIRLOCK_EVENT_ERROR_SEQUENCE,    /* frames added out of order */
} AirlockEventError;

/* One EVENT frame.  Fields whose TLV was absent are 0 / NULL / FALSE (the
 * has_ flags tell a 0 that was sent from one that was not).  Strings from
 * the guest are escaped with airlock_evidence_escape_bytes() (valid UTF-8,
 * no control characters); raw bytes are kept as GBytes.  Everything an
 * event points to belongs to its log, like the event itself: read-only,
 * and the strings and vectors (syscall_name, exe, argv, exec_argv, path,
 * note) may be shared with other events of the same log. */
typedef struct _AirlockEvent {
  guint64 seq;               /* of its frame */
  guint32 kind;              /* enum airlock_event_kind */
  guint64 time_ns;           /* guest CLOCK_BOOTTIME */
  guint32 action;            /* enum airlock_event_action (SYSCALL only, else 0) */
  guint32 reason;            /* enum airlock_deny_reason (denials only, else 0) */

  /* The call (SYSCALL events). */
  gboolean has_syscall;
  guint32 syscall_nr;        /* as the kernel saw it (x32's bit included) */
  guint32 audit_arch;        /* AUDIT_ARCH_* */
  const char *abi;           /* "x86_64", "x32", "i386", "aarch64", "arm", or "unknown"
                              * (static); NULL without a syscall */
  gboolean foreign_abi;      /* any ABI but x86_64 and aarch64 */
  const char *syscall_name;  /* "connect", …, "syscall-N" when unknown; no ABI prefix */
  gboolean has_args;
  guint64 args[6];

  /* Who. */
  gboolean has_pid, has_tid, has_ppid, has_nspid, has_uid, has_gid;
  guint32 pid, tid, ppid, nspid, uid, gid;
  char *exe;                 /* escaped /proc/PID/exe, or NULL */
  GStrv argv;                /* escaped, split at NULs (one trailing NUL dropped), or NULL */

  /* The socket. */
  gboolean has_fd;
  guint32 fd;
  /* The SOCKET triple, or for socket()/socketpair() without one, args 0–2
   * (socket_from_args).  Type without SOCK_NONBLOCK / SOCK_CLOEXEC on the
   * wire; args keep them (the key masks them). */
  gboolean has_socket;
  gboolean socket_from_args;
  guint32 sock_family, sock_type, sock_protocol;
  gboolean has_sock_id;
  guint64 sock_id;

  /* The address passed (ADDR, ADDRLEN), decoded as the call reads it. */
  GBytes *addr;
  gboolean has_addrlen;
  guint32 addrlen;
  gboolean addr_decoded;     /* addr_sa is set */
  const AirlockSockaddr *addr_sa;  /* decoded addresses belong to the log, shared by
                                    * every event with the same one */
  char *addr_error;          /* why it does not decode (the kernel's refusal), or NULL */
  /* The connected peer (PEER), decoded as connect() would read it. */
  GBytes *peer;
  gboolean peer_decoded;
  const AirlockSockaddr *peer_sa;
  char *peer_error;
  /* The local address (LOCAL), decoded as bind() would read it. */
  GBytes *local;
  gboolean local_decoded;
  const AirlockSockaddr *local_sa;

  gboolean has_msg_flags;
  guint32 msg_flags;
  gboolean has_msg_index;    /* a sendmmsg entry */
  guint32 msg_index, msg_count;
  guint64 mmsg_first_seq;    /* entries: seq of the call's entry 0 (its own seq for entry 0) */

  GBytes *payload;           /* first bytes sent (DNS only), or NULL */
  gboolean has_payload_len;
  guint64 payload_len;       /* bytes the call asked to send */
  /* DNS messages this event completed (AirlockDnsQuery *, message order):
   * the datagram it sent, or the TCP messages its bytes finished.  Never
   * NULL. */
  GPtrArray *dns;

  char *path;                /* escaped execve path, or NULL */
  GStrv exec_argv;           /* execve: the argv it passes (escaped), or NULL */
  char *note;                /* escaped, or NULL */

  /* RESULT events: the syscall event they belong to. */
  gboolean has_ref;
  guint64 ref;
  /* The outcome: on a RESULT event its own value; on a syscall event the
   * value of the RESULT that referred to it (for every entry of a sendmmsg:
   * the number of messages sent, or -errno). */
  gboolean has_result;
  gint64 result;
  guint64 result_seq;        /* the RESULT event's seq */

  gboolean has_exit_status;  /* WORKLOAD_EXIT */
  guint32 exit_status;       /* wait status */
  guint32 phase;             /* enum airlock_phase: controls or the workload (0: before any) */
} AirlockEvent;

typedef struct _AirlockEventLog AirlockEventLog;

/* Never fails.  Free with airlock_event_log_free() (accepts NULL), which
 * drops one reference: the log goes when its last holder lets go. */
AIRLOCK_PUBLIC AirlockEventLog *airlock_event_log_new (void);
AIRLOCK_PUBLIC AirlockEventLog *airlock_event_log_ref (AirlockEventLog *log);
AIRLOCK_PUBLIC void airlock_event_log_free (AirlockEventLog *log);

/* Decodes one accepted EVENT frame (frames in channel order, seq
 * increasing).  Returns FALSE with @error set (AIRLOCK_EVENT_ERROR) when
 * the frame is not an EVENT frame, breaks protocol.h, or is a RESULT that
 * refers to no earlier syscall event without a result; the log is then
 * unchanged. */
AIRLOCK_PUBLIC gboolean airlock_event_log_add_frame (AirlockEventLog *log, const AirlockFrame *frame,
                                                     GError **error);

/* The events so far, in seq order (element type AirlockEvent *).  Owned by
 * the log. */
AIRLOCK_PUBLIC GPtrArray *airlock_event_log_get_events (AirlockEventLog *log);

/* The syscall event with frame sequence number @seq, or NULL. */
AIRLOCK_PUBLIC const AirlockEvent *airlock_event_log_lookup (AirlockEventLog *log, guint64 seq);

/* The event's key line, the form tests write expectations in:
 *
 *   SYSCALL ACTION KEY[ dns=NAME]...
 *
 * SYSCALL is the name, prefixed "ABI:" for a foreign ABI ("i386:connect",
 * "x32:connect", "arm:connect").  ACTION is "continue", "emulate" or
 * "deny:REASON" (airlock_deny_reason_to_string()).  KEY is
 * airlock_attempt_key() of the destination (ADDR, or PEER when there is no
 * ADDR or the call ignores it) when it decodes; "FAMILY/TYPE/PROTO -" when
 * the event names a socket but no destination; "FAMILY/TYPE/PROTO ?" when
 * an address was given but does not decode; "-" when no socket is
 * involved.  Then " dns=NAME" per question of each DNS message the event
 * completed, in order.  NULL for kinds other than SYSCALL.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_event_key_line (const AirlockEvent *ev);

/* The destination the key uses (see key_line), or NULL. */
AIRLOCK_PUBLIC const AirlockSockaddr *airlock_event_get_destination (const AirlockEvent *ev);

/* What happened to the call, for people: "denied: raw-socket", "ok",
 * "ECONNREFUSED", "sent", "not sent" (sendmmsg entries past the count),
 * "allowed" (the kernel ran it; no result reported), "no result" (emulated,
 * no RESULT yet); "" for other kinds.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_event_outcome (const AirlockEvent *ev);

/* airlock_result_to_string(), airlock_wait_status_to_string(),
 * airlock_syscall_abi() and airlock_syscall_name(): abi-names.h. */

/* @ev as one JSON object on one line (no newline), every field it has:
 * what `airlock run --json` prints and a bundle's events.jsonl holds.
 * Deterministic: the same event always gives the same bytes.  Transfer
 * full. */
AIRLOCK_PUBLIC char *airlock_event_to_json (AirlockArch arch, const AirlockEvent *ev);
/* The same members, added to the object @b has open (for a line that
 * carries more, like `airlock run --json`'s "type"). */
AIRLOCK_PUBLIC void airlock_event_add_json_members (JsonBuilder *b, AirlockArch arch, const AirlockEvent *ev);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockEventLog, airlock_event_log_free)

G_END_DECLS
