/* Evidence frames: header parsing, TLV iteration and per-type TLV rules.
 *
 * Pure functions over bytes a hostile guest controls.  Nothing here keeps
 * state, allocates for the caller's input or trusts a length it has not
 * checked against the bytes actually present. */
#pragma once

#include "airlock-macros.h"
#include "evidence/channel.h"    /* airlock_evidence_escape_bytes */

#include "protocol.h"

G_BEGIN_DECLS

typedef enum {
  AIRLOCK_HEADER_INCOMPLETE,   /* a valid prefix: wait for more bytes */
  AIRLOCK_HEADER_COMPLETE,     /* all 16 bytes present and acceptable */
  AIRLOCK_HEADER_BAD_MAGIC,
  AIRLOCK_HEADER_BAD_VERSION,
  AIRLOCK_HEADER_UNKNOWN_TYPE,
  AIRLOCK_HEADER_OVERSIZE,
} AirlockHeaderStatus;

typedef struct {
  guint8 version;
  guint8 type;
  guint16 length;   /* payload bytes */
  guint64 seq;
} AirlockFrameHeader;

/* Checks the first @len bytes of a frame, field by field in wire order, as
 * soon as each field's bytes are present: so a bad magic is reported after
 * one wrong byte and an oversize length before any payload arrives, and the
 * verdict on a stream never depends on how it was split into reads (the
 * first bad field in wire order wins, whatever the chunking).
 *
 * Fills @ret_header only on AIRLOCK_HEADER_COMPLETE.  On an error, the
 * offending value is stored in @ret_bad_value (the version, type or length;
 * for a bad magic, the index of the first wrong byte) when non-NULL. */
AirlockHeaderStatus airlock_frame_parse_header (const guint8 *data, gsize len,
                                                AirlockFrameHeader *ret_header,
                                                guint *ret_bad_value);

/* Whether @type is one of enum airlock_frame_type. */
gboolean airlock_frame_type_is_known (guint type);
/* "hello", "heartbeat", …; "unknown" for anything else.  Static string. */
const char *airlock_frame_type_to_string (guint type);
/* "nonce", "arch", …; "unknown" for anything else.  Static string. */
const char *airlock_tlv_tag_to_string (guint tag);

typedef struct {
  guint16 tag;
  guint16 len;
  const guint8 *value;   /* points into the payload; @len bytes */
  gsize offset;          /* of the TLV header within the payload */
} AirlockTlv;

typedef struct {
  const guint8 *data;
  gsize len;
  gsize pos;
  gboolean truncated;
} AirlockTlvIter;

typedef enum {
  AIRLOCK_TLV_ITER_END,        /* the payload ended exactly after the last TLV */
  AIRLOCK_TLV_ITER_ITEM,       /* *ret_tlv is the next TLV */
  AIRLOCK_TLV_ITER_TRUNCATED,  /* a TLV header or value runs past the payload;
                                * returned again on every later call */
} AirlockTlvIterResult;

void airlock_tlv_iter_init (AirlockTlvIter *iter, const guint8 *payload, gsize len);
AirlockTlvIterResult airlock_tlv_iter_next (AirlockTlvIter *iter, AirlockTlv *ret_tlv);

/* The highest tag a guest frame may carry; tags index AirlockFrameTlvs.tlv.
 * The run spec's tags (AIRLOCK_SPEC_*, above it) travel host → guest only:
 * a guest frame carrying one is malformed like any unknown tag. */
#define AIRLOCK_TLV_TAG_MAX AIRLOCK_TLV_EV_EXEC_ARGV

/* A checked payload: each tag its frame type allows, at most once. */
typedef struct {
  gboolean present[AIRLOCK_TLV_TAG_MAX + 1];
  AirlockTlv tlv[AIRLOCK_TLV_TAG_MAX + 1];
  guint n_tlvs;
} AirlockFrameTlvs;

/* Checks the payload of a frame of @type (which must be known): every TLV
 * inside the payload, only the tags that type allows, none twice, every
 * mandatory one present, integers and fixed-size values exactly their size,
 * bounded byte strings within their bound.  EVENT frames are checked by
 * kind as well (protocol.h, above AIRLOCK_TLV_EV_KIND): the kind, action
 * and deny reason must be values protocol.h defines, each kind carries its
 * mandatory tags and only the tags that make sense for it, and REASON is
 * present exactly when ACTION is DENY.
 *
 * Returns TRUE and fills @ret_tlvs, or returns FALSE and sets @ret_problem
 * (transfer full) to a clause describing the first problem found, with its
 * byte offset as @payload_offset (where the payload starts in the raw
 * stream) plus its position in the payload. */
gboolean airlock_frame_check_tlvs (guint type, const guint8 *payload, gsize len,
                                   gsize payload_offset, AirlockFrameTlvs *ret_tlvs,
                                   char **ret_problem);

/* The same checks, with the same result and problem, parsed straight into
 * @tlvs (the decoders' own, reused frame after frame, never cleared): on
 * success present[] and n_tlvs are set and an entry of tlv[] is valid only
 * where present[] is; on failure @tlvs holds whatever was parsed before the
 * problem, and callers must not use it. */
gboolean airlock_frame_parse_tlvs (guint type, const guint8 *payload, gsize len,
                                   gsize payload_offset, AirlockFrameTlvs *tlvs,
                                   char **ret_problem);

/* A frame's payload whose TLVs a decoder has just checked, handed on to code
 * that would check them again: the channel's frame func feeds the event
 * log, which checks every EVENT frame itself because it also takes frames
 * from elsewhere (a bundle being verified, a test).  While published, the
 * payload (immutable, as every GBytes) is alive and @tlvs is what
 * airlock_frame_parse_tlvs() made of it as a frame of @type. */
typedef struct {
  GBytes *payload;
  guint type;
  const AirlockFrameTlvs *tlvs;
} AirlockCheckedPayload;

/* Publishes @checked (or, with NULL, nothing) for the calling thread only,
 * until the next call; returns what was published before, for the caller
 * to restore when @checked goes out of scope. */
const AirlockCheckedPayload *airlock_frame_publish_checked (const AirlockCheckedPayload *checked);
/* The published TLVs of @payload as a frame of @type, or NULL: the same
 * GBytes (not merely equal bytes), on this thread. */
const AirlockFrameTlvs *airlock_frame_find_checked (GBytes *payload, guint type);

/* Bounds of the byte-string TLVs of an EVENT frame. */
#define AIRLOCK_EVENT_SOCKADDR_MAX 128   /* ADDR, PEER, LOCAL: a sockaddr_storage */
#define AIRLOCK_EVENT_STRING_MAX 4096    /* EXE, ARGV, PATH, PAYLOAD */
#define AIRLOCK_EVENT_NOTE_MAX AIRLOCK_EV_NOTE_MAX  /* protocol.h */

/* "syscall", "result", …; "unknown" for anything else.  Static strings. */
const char *airlock_event_kind_to_string (guint kind);
/* "continue", "deny", "emulate"; "unknown" for anything else. */
const char *airlock_event_action_to_string (guint action);
/* "foreign-abi", "raw-socket", …; "unknown" for anything else. */
const char *airlock_deny_reason_to_string (guint reason);

/* Reads a checked integer TLV (its size was enforced by check_tlvs). */
guint32 airlock_tlv_get_u32 (const AirlockTlv *tlv);
guint64 airlock_tlv_get_u64 (const AirlockTlv *tlv);

G_END_DECLS
