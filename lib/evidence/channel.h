/* Host side of the evidence channel: decodes the guest's frames, checks the
 * handshake, sequence, heartbeats and trailer, keeps the raw bytes exactly as
 * received and chains SHA-256 over the frames.
 *
 * An AirlockChannel is a state machine fed with bytes and clock readings; it
 * does no I/O, so every anomaly can be tested (and fuzzed) without a VM.
 * Not thread-safe: the caller serialises calls. */
#pragma once

#include "../airlock-macros.h"

G_BEGIN_DECLS

typedef enum {
  AIRLOCK_CHANNEL_AWAITING_HELLO, /* host hello sent, no guest frame yet */
  AIRLOCK_CHANNEL_OPEN,           /* hello accepted; frames flowing */
  AIRLOCK_CHANNEL_COMPLETE,       /* trailer accepted and its counts match */
  AIRLOCK_CHANNEL_INCONCLUSIVE,   /* an anomaly; final */
} AirlockChannelState;

/* Why a channel is inconclusive.  Every code makes the run inconclusive. */
typedef enum {
  AIRLOCK_ANOMALY_NONE = 0,
  AIRLOCK_ANOMALY_NO_HELLO,          /* first frame not a hello, or none before close/timeout */
  AIRLOCK_ANOMALY_WRONG_NONCE,       /* hello nonce differs from ours */
  AIRLOCK_ANOMALY_BAD_MAGIC,         /* frame does not start with "ALKF" */
  AIRLOCK_ANOMALY_BAD_VERSION,       /* protocol version we do not speak */
  AIRLOCK_ANOMALY_OVERSIZE,          /* length above AIRLOCK_FRAME_MAX_PAYLOAD */
  AIRLOCK_ANOMALY_MALFORMED,         /* TLV overrun, missing/duplicate/unknown tag, bad size */
  AIRLOCK_ANOMALY_UNKNOWN_TYPE,      /* frame type we do not know */
  AIRLOCK_ANOMALY_SEQUENCE,          /* seq is not previous + 1 (gap, replay, reorder) */
  AIRLOCK_ANOMALY_HEARTBEAT_GAP,     /* no frame within the heartbeat tolerance */
  AIRLOCK_ANOMALY_CLOSED_EARLY,      /* channel closed before the trailer (or mid-frame) */
  AIRLOCK_ANOMALY_TRAILER_MISMATCH,  /* trailer counts differ from what arrived */
  AIRLOCK_ANOMALY_AFTER_TRAILER,     /* bytes after the trailer */
  AIRLOCK_ANOMALY_NOT_EXCLUSIVE,     /* the guest's second open of the port did not fail with EBUSY */
  AIRLOCK_ANOMALY_EXTERNAL,          /* the caller ended the run (boot timeout, VM died, …) */
  AIRLOCK_ANOMALY_BOUND,             /* the stream reached its bound (lib/bounds-private.h) */
} AirlockAnomaly;

/* One accepted frame.  Owned by the channel; valid until it is freed. */
typedef struct {
  guint64 seq;
  guint8 type;            /* enum airlock_frame_type */
  gsize offset;           /* of its first byte in the raw stream */
  gsize size;             /* header + payload bytes */
  gint64 received_mono_us;/* g_get_monotonic_time() when its last byte arrived */
  gint64 received_real_us;/* g_get_real_time() at the same moment */
  GBytes *payload;        /* the TLVs, as received */
  guint8 chain[32];       /* chain value after this frame */
} AirlockFrame;

typedef struct _AirlockChannel AirlockChannel;

/* Called for every accepted frame, in order, from inside feed(). */
typedef void (*AirlockFrameFunc) (AirlockChannel *channel, const AirlockFrame *frame,
                                  gpointer user_data);

/* Creates a channel expecting a hello that echoes @nonce (32 bytes, copied),
 * heartbeats every @heartbeat_ms, and tolerating up to @tolerance_ms without
 * a heartbeat once open (counted from the hello, then from each heartbeat;
 * LOG and EVENT frames do not count).  Never fails. */
AIRLOCK_PUBLIC AirlockChannel *airlock_channel_new (const guint8 *nonce, guint heartbeat_ms,
                                                    guint tolerance_ms);
/* Creates a channel with a fresh random nonce from the kernel's CSPRNG. */
AIRLOCK_PUBLIC AirlockChannel *airlock_channel_new_random (guint heartbeat_ms, guint tolerance_ms);
/* airlock_channel_free() drops one reference: the channel goes with its
 * last holder (a run record keeps the channel of its run). */
AIRLOCK_PUBLIC AirlockChannel *airlock_channel_ref (AirlockChannel *channel);
AIRLOCK_PUBLIC void airlock_channel_free (AirlockChannel *channel);

/* Sets the run spec (airlock_run_spec_encode(), at most AIRLOCK_SPEC_MAX
 * bytes; a reference is taken) that the host sends right after its hello:
 * the hello's spec_length becomes its size, and the chain is re-seeded with
 * SHA-256("airlock-chain-v1" || hello || spec), binding every frame to the
 * case that was asked for.  Call it before sending the hello and before
 * any feed(); later it is a programmer error.  A channel without a spec (or
 * with an empty one) is the boot check: spec_length 0, chain seeded with the
 * hello alone. */
AIRLOCK_PUBLIC void airlock_channel_set_spec (AirlockChannel *channel, GBytes *spec);
/* The spec set with set_spec(), or NULL.  Owned by the channel. */
AIRLOCK_PUBLIC GBytes *airlock_channel_get_spec (AirlockChannel *channel);

/* The 48 bytes the host sends first (struct airlock_host_hello); the spec,
 * if any, follows them on the wire. */
AIRLOCK_PUBLIC const guint8 *airlock_channel_get_host_hello (AirlockChannel *channel, gsize *ret_len);
AIRLOCK_PUBLIC const guint8 *airlock_channel_get_nonce (AirlockChannel *channel);

AIRLOCK_PUBLIC void airlock_channel_set_frame_func (AirlockChannel *channel, AirlockFrameFunc func,
                                                    gpointer user_data);

/* Feeds bytes as received.  They are appended to the raw stream in every
 * state (no evidence is dropped, even after an anomaly) up to the stream
 * bound, AIRLOCK_BOUND_EVIDENCE_STREAM bytes: a stream that reaches it
 * keeps its first bound bytes and ends INCONCLUSIVE (AIRLOCK_ANOMALY_BOUND)
 * unless an earlier anomaly ended it.  A replay of the kept bytes reaches
 * the same end.  They are decoded only while the channel is AWAITING_HELLO
 * or OPEN. */
AIRLOCK_PUBLIC void airlock_channel_feed (AirlockChannel *channel, const guint8 *data, gsize len,
                                          gint64 mono_us, gint64 real_us);
/* Checks the heartbeat deadline against @mono_us.  Call it periodically. */
AIRLOCK_PUBLIC void airlock_channel_check_time (AirlockChannel *channel, gint64 mono_us);
/* The transport reached end of file. */
AIRLOCK_PUBLIC void airlock_channel_close (AirlockChannel *channel, gint64 mono_us);
/* Ends the run from outside with @reason (copied), unless already final
 * (COMPLETE or INCONCLUSIVE): then it does nothing. */
AIRLOCK_PUBLIC void airlock_channel_fail (AirlockChannel *channel, AirlockAnomaly anomaly,
                                          const char *reason);

AIRLOCK_PUBLIC AirlockChannelState airlock_channel_get_state (AirlockChannel *channel);
AIRLOCK_PUBLIC AirlockAnomaly airlock_channel_get_anomaly (AirlockChannel *channel);
/* A sentence naming the anomaly and its detail ("sequence gap: expected frame
 * 5, got 7 at byte 1234"), or NULL when there is none. */
AIRLOCK_PUBLIC const char *airlock_channel_get_reason (AirlockChannel *channel);
/* Stable short name of an anomaly ("sequence", "heartbeat-gap", …). */
AIRLOCK_PUBLIC const char *airlock_anomaly_to_string (AirlockAnomaly anomaly);

/* Raw bytes exactly as received, in order.  Owned by the channel (take a
 * reference to keep it): valid until the next feed() or free(). */
AIRLOCK_PUBLIC GBytes *airlock_channel_get_raw (AirlockChannel *channel);
/* Accepted frames, in order (element type AirlockFrame *).  Owned by the
 * channel. */
AIRLOCK_PUBLIC GPtrArray *airlock_channel_get_frames (AirlockChannel *channel);
/* Chain head: SHA-256 chained over every accepted frame, starting from
 * SHA-256("airlock-chain-v1" || host hello).  32 bytes. */
AIRLOCK_PUBLIC const guint8 *airlock_channel_get_chain_head (AirlockChannel *channel);

typedef struct {
  char *arch;              /* "x86_64" / "aarch64" */
  char *kernel_release;
  char *build_id_hex;
  guint64 uptime_ns;       /* guest boot time when it sent the hello */
  guint32 second_open_errno;
  guint32 recorder;        /* enum airlock_recorder (protocol.h); 0: not said (a boot check) */
} AirlockGuestHello;

/* "seccomp" (user notification alone), "bpf-lsm+seccomp" (the kernel-hook
 * recorder for connect, bind, listen, accept, sendto, sendmsg and writes on
 * sockets, notification for the rest)
 * or "bpf-kprobe+seccomp" (the same on kprobes, which cannot refuse a call
 * and count the ones they could not record): docs/supervisor.md.  NULL
 * for any other value, 0 included. */
AIRLOCK_PUBLIC const char *airlock_recorder_to_string (guint32 recorder);

typedef struct {
  guint64 frame_count;
  guint64 heartbeat_count;
  guint64 event_count;
  guint32 exit_status;
  guint32 end_reason;      /* enum airlock_end_reason */
  gboolean has_records_lost;
  guint64 records_lost;    /* sends, connects and connect outcomes the kernel-hook
                            * recorder could not record (protocol.h) */
} AirlockTrailer;

/* NULL until a hello (resp. trailer) was accepted. */
AIRLOCK_PUBLIC const AirlockGuestHello *airlock_channel_get_hello (AirlockChannel *channel);
AIRLOCK_PUBLIC const AirlockTrailer *airlock_channel_get_trailer (AirlockChannel *channel);
AIRLOCK_PUBLIC guint64 airlock_channel_get_heartbeat_count (AirlockChannel *channel);
/* Guest LOG messages, in order (element type char *), escaped like every
 * guest string (valid UTF-8, no control characters).  Owned by the channel. */
AIRLOCK_PUBLIC GPtrArray *airlock_channel_get_log (AirlockChannel *channel);

/* Makes arbitrary guest bytes safe to store, print and put in JSON: valid
 * UTF-8 is kept except for a fixed set of characters that can disguise
 * text (see frame.c); backslash becomes "\\"; \n, \r, \t become "\n",
 * "\r", "\t"; other ASCII control bytes and bytes that are not UTF-8 become
 * "\xNN"; the disguising characters become "\u{XXXX}".  The result is valid
 * UTF-8 without control characters and maps back to the input
 * unambiguously.  The command prints a workload's output and every guest
string through it.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_evidence_escape_bytes (const guint8 *data, gsize len);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockChannel, airlock_channel_free)

G_END_DECLS
