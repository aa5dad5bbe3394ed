/* Evidence frames: header parsing, TLV iteration, per-type TLV rules.
 *
 * Everything here reads bytes a hostile guest wrote.  Lengths from the wire
 * are compared against the bytes actually present before any read, and the
 * header length against AIRLOCK_FRAME_MAX_PAYLOAD before the caller waits for
 * (or buffers) a payload. */
#include "config.h"

#include "frame-private.h"

#include "wire.h"

#include <string.h>

G_STATIC_ASSERT (AIRLOCK_TLV_TAG_MAX < 64);  /* tag masks below are guint64 */
/* The spec's tags lie above every tag a guest frame may carry, so no table
 * below can admit one. */
G_STATIC_ASSERT (AIRLOCK_SPEC_ARG > AIRLOCK_TLV_TAG_MAX);

AirlockHeaderStatus
airlock_frame_parse_header (const guint8 *data, gsize len, AirlockFrameHeader *ret_header,
                            guint *ret_bad_value)
{
  static const guint8 magic[4] = { 'A', 'L', 'K', 'F' };
  guint16 length;

  g_return_val_if_fail (data != NULL || len == 0, AIRLOCK_HEADER_INCOMPLETE);

  for (gsize i = 0; i < MIN (len, sizeof magic); i++)
    if (data[i] != magic[i])
      {
        if (ret_bad_value)
          *ret_bad_value = (guint) i;
        return AIRLOCK_HEADER_BAD_MAGIC;
      }
  if (len <= 4)
    return AIRLOCK_HEADER_INCOMPLETE;

  if (data[4] != AIRLOCK_PROTO_VERSION)
    {
      if (ret_bad_value)
        *ret_bad_value = data[4];
      return AIRLOCK_HEADER_BAD_VERSION;
    }
  if (len <= 5)
    return AIRLOCK_HEADER_INCOMPLETE;

  if (!airlock_frame_type_is_known (data[5]))
    {
      if (ret_bad_value)
        *ret_bad_value = data[5];
      return AIRLOCK_HEADER_UNKNOWN_TYPE;
    }
  if (len < 8)
    return AIRLOCK_HEADER_INCOMPLETE;

  /* Checked now, not after the payload: a hostile length must never make
   * the host wait for, or buffer, more than the protocol's bound. */
  length = wire_get_le16 (data + 6);
  if (length > AIRLOCK_FRAME_MAX_PAYLOAD)
    {
      if (ret_bad_value)
        *ret_bad_value = length;
      return AIRLOCK_HEADER_OVERSIZE;
    }
  if (len < AIRLOCK_FRAME_HEADER_SIZE)
    return AIRLOCK_HEADER_INCOMPLETE;

  if (ret_header)
    {
      ret_header->version = data[4];
      ret_header->type = data[5];
      ret_header->length = length;
      ret_header->seq = wire_get_le64 (data + 8);
    }
  return AIRLOCK_HEADER_COMPLETE;
}

gboolean
airlock_frame_type_is_known (guint type)
{
  switch (type)
    {
    case AIRLOCK_FRAME_HELLO:
    case AIRLOCK_FRAME_HEARTBEAT:
    case AIRLOCK_FRAME_TRAILER:
    case AIRLOCK_FRAME_LOG:
    case AIRLOCK_FRAME_EVENT:
      return TRUE;
    default:
      return FALSE;
    }
}

const char *
airlock_frame_type_to_string (guint type)
{
  switch (type)
    {
    case AIRLOCK_FRAME_HELLO:
      return "hello";
    case AIRLOCK_FRAME_HEARTBEAT:
      return "heartbeat";
    case AIRLOCK_FRAME_TRAILER:
      return "trailer";
    case AIRLOCK_FRAME_LOG:
      return "log";
    case AIRLOCK_FRAME_EVENT:
      return "event";
    default:
      return "unknown";
    }
}

static const char *const tlv_tag_names[AIRLOCK_TLV_TAG_MAX + 1] = {
  [AIRLOCK_TLV_NONCE] = "nonce",
  [AIRLOCK_TLV_ARCH] = "arch",
  [AIRLOCK_TLV_KERNEL_RELEASE] = "kernel-release",
  [AIRLOCK_TLV_BUILD_ID] = "build-id",
  [AIRLOCK_TLV_UPTIME_NS] = "uptime-ns",
  [AIRLOCK_TLV_SECOND_OPEN_ERRNO] = "second-open-errno",
  [AIRLOCK_TLV_RECORDER] = "recorder",
  [AIRLOCK_TLV_RECORDS_LOST] = "records-lost",
  [AIRLOCK_TLV_FRAME_COUNT] = "frame-count",
  [AIRLOCK_TLV_HEARTBEAT_COUNT] = "heartbeat-count",
  [AIRLOCK_TLV_EVENT_COUNT] = "event-count",
  [AIRLOCK_TLV_EXIT_STATUS] = "exit-status",
  [AIRLOCK_TLV_END_REASON] = "end-reason",
  [AIRLOCK_TLV_MESSAGE] = "message",
  [AIRLOCK_TLV_EV_PHASE] = "phase",
  [AIRLOCK_TLV_EV_KIND] = "kind",
  [AIRLOCK_TLV_EV_TIME_NS] = "time-ns",
  [AIRLOCK_TLV_EV_ACTION] = "action",
  [AIRLOCK_TLV_EV_REASON] = "reason",
  [AIRLOCK_TLV_EV_SYSCALL] = "syscall",
  [AIRLOCK_TLV_EV_AUDIT_ARCH] = "audit-arch",
  [AIRLOCK_TLV_EV_ARGS] = "args",
  [AIRLOCK_TLV_EV_PID] = "pid",
  [AIRLOCK_TLV_EV_TID] = "tid",
  [AIRLOCK_TLV_EV_PPID] = "ppid",
  [AIRLOCK_TLV_EV_NSPID] = "nspid",
  [AIRLOCK_TLV_EV_UID] = "uid",
  [AIRLOCK_TLV_EV_GID] = "gid",
  [AIRLOCK_TLV_EV_EXE] = "exe",
  [AIRLOCK_TLV_EV_ARGV] = "argv",
  [AIRLOCK_TLV_EV_FD] = "fd",
  [AIRLOCK_TLV_EV_SOCKET] = "socket",
  [AIRLOCK_TLV_EV_SOCK_ID] = "sock-id",
  [AIRLOCK_TLV_EV_ADDR] = "addr",
  [AIRLOCK_TLV_EV_ADDRLEN] = "addrlen",
  [AIRLOCK_TLV_EV_PEER] = "peer",
  [AIRLOCK_TLV_EV_MSG_FLAGS] = "msg-flags",
  [AIRLOCK_TLV_EV_MSG_INDEX] = "msg-index",
  [AIRLOCK_TLV_EV_PAYLOAD] = "payload",
  [AIRLOCK_TLV_EV_PAYLOAD_LEN] = "payload-len",
  [AIRLOCK_TLV_EV_PATH] = "path",
  [AIRLOCK_TLV_EV_REF] = "ref",
  [AIRLOCK_TLV_EV_RESULT] = "result",
  [AIRLOCK_TLV_EV_EXIT_STATUS] = "event-exit-status",
  [AIRLOCK_TLV_EV_NOTE] = "note",
  [AIRLOCK_TLV_EV_LOCAL] = "local",
  [AIRLOCK_TLV_EV_EXEC_ARGV] = "exec-argv",
};

const char *
airlock_tlv_tag_to_string (guint tag)
{
  if (tag <= AIRLOCK_TLV_TAG_MAX && tlv_tag_names[tag] != NULL)
    return tlv_tag_names[tag];
  /* Named so a spec tag in a guest frame reads as what it is. */
  switch (tag)
    {
    case AIRLOCK_SPEC_ARG:
      return "spec-arg";
    case AIRLOCK_SPEC_ENV:
      return "spec-env";
    case AIRLOCK_SPEC_CWD:
      return "spec-cwd";
    case AIRLOCK_SPEC_UID:
      return "spec-uid";
    case AIRLOCK_SPEC_GID:
      return "spec-gid";
    case AIRLOCK_SPEC_GROUPS:
      return "spec-groups";
    case AIRLOCK_SPEC_ROOT:
      return "spec-root";
    case AIRLOCK_SPEC_TIMEOUT_MS:
      return "spec-timeout-ms";
    case AIRLOCK_SPEC_HOSTNAME:
      return "spec-hostname";
    default:
      return "unknown";
    }
}

const char *
airlock_event_kind_to_string (guint kind)
{
  switch (kind)
    {
    case AIRLOCK_EVENT_SYSCALL:
      return "syscall";
    case AIRLOCK_EVENT_RESULT:
      return "result";
    case AIRLOCK_EVENT_WORKLOAD_START:
      return "workload-start";
    case AIRLOCK_EVENT_WORKLOAD_EXIT:
      return "workload-exit";
    case AIRLOCK_EVENT_WORKLOAD_EXEC:
      return "workload-exec";
    default:
      return "unknown";
    }
}

const char *
airlock_event_action_to_string (guint action)
{
  switch (action)
    {
    case AIRLOCK_ACTION_CONTINUE:
      return "continue";
    case AIRLOCK_ACTION_DENY:
      return "deny";
    case AIRLOCK_ACTION_EMULATE:
      return "emulate";
    default:
      return "unknown";
    }
}

static const char *const deny_reason_names[] = {
  [AIRLOCK_DENY_FOREIGN_ABI] = "foreign-abi",
  [AIRLOCK_DENY_X32] = "x32",
  [AIRLOCK_DENY_IO_URING] = "io-uring",
  [AIRLOCK_DENY_RAW_SOCKET] = "raw-socket",
  [AIRLOCK_DENY_PACKET_SOCKET] = "packet-socket",
  [AIRLOCK_DENY_VSOCK] = "vsock",
  [AIRLOCK_DENY_SCTP] = "sctp",
  [AIRLOCK_DENY_SOCKET_FAMILY] = "socket-family",
  [AIRLOCK_DENY_PTRACE] = "ptrace",
  [AIRLOCK_DENY_PROCESS_VM_WRITEV] = "process-vm-writev",
  [AIRLOCK_DENY_SECCOMP_LISTENER] = "seccomp-listener",
  [AIRLOCK_DENY_CLONE_UNTRACED] = "clone-untraced",
  [AIRLOCK_DENY_CLONE3] = "clone3",
  [AIRLOCK_DENY_KEYRING] = "keyring",
  [AIRLOCK_DENY_BPF] = "bpf",
  [AIRLOCK_DENY_KERNEL] = "kernel",
};

const char *
airlock_deny_reason_to_string (guint reason)
{
  if (reason < G_N_ELEMENTS (deny_reason_names) && deny_reason_names[reason] != NULL)
    return deny_reason_names[reason];
  return "unknown";
}

void
airlock_tlv_iter_init (AirlockTlvIter *iter, const guint8 *payload, gsize len)
{
  g_return_if_fail (iter != NULL);
  g_return_if_fail (payload != NULL || len == 0);

  iter->data = payload;
  iter->len = len;
  iter->pos = 0;
  iter->truncated = FALSE;
}

AirlockTlvIterResult
airlock_tlv_iter_next (AirlockTlvIter *iter, AirlockTlv *ret_tlv)
{
  gsize left;
  guint16 value_len;

  g_return_val_if_fail (iter != NULL, AIRLOCK_TLV_ITER_TRUNCATED);

  if (iter->truncated)
    return AIRLOCK_TLV_ITER_TRUNCATED;
  g_assert (iter->pos <= iter->len);
  left = iter->len - iter->pos;
  if (left == 0)
    return AIRLOCK_TLV_ITER_END;

  /* Both tests compare against what is left, never add a wire length to a
   * position, so nothing here can overflow. */
  if (left < AIRLOCK_TLV_HEADER_SIZE)
    {
      iter->truncated = TRUE;
      return AIRLOCK_TLV_ITER_TRUNCATED;
    }
  value_len = wire_get_le16 (iter->data + iter->pos + 2);
  if (value_len > left - AIRLOCK_TLV_HEADER_SIZE)
    {
      iter->truncated = TRUE;
      return AIRLOCK_TLV_ITER_TRUNCATED;
    }

  if (ret_tlv)
    {
      ret_tlv->tag = wire_get_le16 (iter->data + iter->pos);
      ret_tlv->len = value_len;
      ret_tlv->value = iter->data + iter->pos + AIRLOCK_TLV_HEADER_SIZE;
      ret_tlv->offset = iter->pos;
    }
  iter->pos += AIRLOCK_TLV_HEADER_SIZE + value_len;
  return AIRLOCK_TLV_ITER_ITEM;
}

/* Exact size of each integer (or fixed-size) tag; 0 for a string. */
static const guint16 tlv_sizes[AIRLOCK_TLV_TAG_MAX + 1] = {
  [AIRLOCK_TLV_NONCE] = AIRLOCK_NONCE_LEN,
  [AIRLOCK_TLV_UPTIME_NS] = 8,
  [AIRLOCK_TLV_SECOND_OPEN_ERRNO] = 4,
  [AIRLOCK_TLV_RECORDER] = 4,
  [AIRLOCK_TLV_RECORDS_LOST] = 8,
  [AIRLOCK_TLV_FRAME_COUNT] = 8,
  [AIRLOCK_TLV_HEARTBEAT_COUNT] = 8,
  [AIRLOCK_TLV_EVENT_COUNT] = 8,
  [AIRLOCK_TLV_EXIT_STATUS] = 4,
  [AIRLOCK_TLV_END_REASON] = 4,
  [AIRLOCK_TLV_EV_PHASE] = 4,
  [AIRLOCK_TLV_EV_KIND] = 4,
  [AIRLOCK_TLV_EV_TIME_NS] = 8,
  [AIRLOCK_TLV_EV_ACTION] = 4,
  [AIRLOCK_TLV_EV_REASON] = 4,
  [AIRLOCK_TLV_EV_SYSCALL] = 4,
  [AIRLOCK_TLV_EV_AUDIT_ARCH] = 4,
  [AIRLOCK_TLV_EV_ARGS] = 6 * 8,
  [AIRLOCK_TLV_EV_PID] = 4,
  [AIRLOCK_TLV_EV_TID] = 4,
  [AIRLOCK_TLV_EV_PPID] = 4,
  [AIRLOCK_TLV_EV_NSPID] = 4,
  [AIRLOCK_TLV_EV_UID] = 4,
  [AIRLOCK_TLV_EV_GID] = 4,
  [AIRLOCK_TLV_EV_FD] = 4,
  [AIRLOCK_TLV_EV_SOCKET] = 3 * 4,
  [AIRLOCK_TLV_EV_SOCK_ID] = 8,
  [AIRLOCK_TLV_EV_ADDRLEN] = 4,
  [AIRLOCK_TLV_EV_MSG_FLAGS] = 4,
  [AIRLOCK_TLV_EV_MSG_INDEX] = 2 * 4,
  [AIRLOCK_TLV_EV_PAYLOAD_LEN] = 8,
  [AIRLOCK_TLV_EV_REF] = 8,
  [AIRLOCK_TLV_EV_RESULT] = 8,
  [AIRLOCK_TLV_EV_EXIT_STATUS] = 4,
};

/* Upper bound of each bounded byte-string tag; 0 for none (the frame's own
 * bound).  The supervisor copies at most this much (protocol.h), so a longer
 * value is not something it wrote. */
static const guint16 tlv_max_lens[AIRLOCK_TLV_TAG_MAX + 1] = {
  [AIRLOCK_TLV_EV_EXE] = AIRLOCK_EVENT_STRING_MAX,
  [AIRLOCK_TLV_EV_ARGV] = AIRLOCK_EVENT_STRING_MAX,
  [AIRLOCK_TLV_EV_ADDR] = AIRLOCK_EVENT_SOCKADDR_MAX,
  [AIRLOCK_TLV_EV_PEER] = AIRLOCK_EVENT_SOCKADDR_MAX,
  [AIRLOCK_TLV_EV_LOCAL] = AIRLOCK_EVENT_SOCKADDR_MAX,
  [AIRLOCK_TLV_EV_PAYLOAD] = AIRLOCK_EVENT_STRING_MAX,
  [AIRLOCK_TLV_EV_PATH] = AIRLOCK_EVENT_STRING_MAX,
  [AIRLOCK_TLV_EV_EXEC_ARGV] = AIRLOCK_EVENT_STRING_MAX,
  [AIRLOCK_TLV_EV_NOTE] = AIRLOCK_EVENT_NOTE_MAX,
};

#define TAG_BIT(tag) (G_GUINT64_CONSTANT (1) << (tag))

typedef struct {
  guint64 allowed;
  guint64 mandatory;
} TlvRules;

/* Tags every event may carry and must carry. */
#define EVENT_COMMON (TAG_BIT (AIRLOCK_TLV_EV_KIND) | TAG_BIT (AIRLOCK_TLV_EV_TIME_NS) \
                      | TAG_BIT (AIRLOCK_TLV_EV_NOTE))
#define EVENT_MANDATORY (TAG_BIT (AIRLOCK_TLV_EV_KIND) | TAG_BIT (AIRLOCK_TLV_EV_TIME_NS))
/* Who made a call. */
#define EVENT_PROCESS (TAG_BIT (AIRLOCK_TLV_EV_PID) | TAG_BIT (AIRLOCK_TLV_EV_TID) \
                       | TAG_BIT (AIRLOCK_TLV_EV_PPID) | TAG_BIT (AIRLOCK_TLV_EV_NSPID) \
                       | TAG_BIT (AIRLOCK_TLV_EV_UID) | TAG_BIT (AIRLOCK_TLV_EV_GID) \
                       | TAG_BIT (AIRLOCK_TLV_EV_EXE) | TAG_BIT (AIRLOCK_TLV_EV_ARGV))
/* What a traced call names. */
#define EVENT_CALL (TAG_BIT (AIRLOCK_TLV_EV_ACTION) | TAG_BIT (AIRLOCK_TLV_EV_REASON) \
                    | TAG_BIT (AIRLOCK_TLV_EV_SYSCALL) | TAG_BIT (AIRLOCK_TLV_EV_AUDIT_ARCH) \
                    | TAG_BIT (AIRLOCK_TLV_EV_ARGS) | TAG_BIT (AIRLOCK_TLV_EV_FD) \
                    | TAG_BIT (AIRLOCK_TLV_EV_SOCKET) | TAG_BIT (AIRLOCK_TLV_EV_SOCK_ID) \
                    | TAG_BIT (AIRLOCK_TLV_EV_ADDR) | TAG_BIT (AIRLOCK_TLV_EV_ADDRLEN) \
                    | TAG_BIT (AIRLOCK_TLV_EV_PEER) | TAG_BIT (AIRLOCK_TLV_EV_MSG_FLAGS) \
                    | TAG_BIT (AIRLOCK_TLV_EV_MSG_INDEX) | TAG_BIT (AIRLOCK_TLV_EV_PAYLOAD) \
                    | TAG_BIT (AIRLOCK_TLV_EV_PAYLOAD_LEN) | TAG_BIT (AIRLOCK_TLV_EV_PATH) \
                    | TAG_BIT (AIRLOCK_TLV_EV_LOCAL) | TAG_BIT (AIRLOCK_TLV_EV_EXEC_ARGV))

/* Per event kind (protocol.h, above AIRLOCK_TLV_EV_KIND).  A tag that
 * belongs to another kind (a REF on a SYSCALL, an ACTION on a RESULT) is
 * malformed: the host would otherwise have to guess what it means. */
static const TlvRules event_kind_rules[] = {
  [AIRLOCK_EVENT_SYSCALL] = {
    .allowed = EVENT_COMMON | EVENT_PROCESS | EVENT_CALL,
    .mandatory = EVENT_MANDATORY | TAG_BIT (AIRLOCK_TLV_EV_ACTION)
                 | TAG_BIT (AIRLOCK_TLV_EV_SYSCALL) | TAG_BIT (AIRLOCK_TLV_EV_AUDIT_ARCH)
                 | TAG_BIT (AIRLOCK_TLV_EV_ARGS) | TAG_BIT (AIRLOCK_TLV_EV_PID)
                 | TAG_BIT (AIRLOCK_TLV_EV_TID),
  },
  [AIRLOCK_EVENT_RESULT] = {
    .allowed = EVENT_COMMON | EVENT_PROCESS | TAG_BIT (AIRLOCK_TLV_EV_REF)
               | TAG_BIT (AIRLOCK_TLV_EV_RESULT),
    .mandatory = EVENT_MANDATORY | TAG_BIT (AIRLOCK_TLV_EV_REF)
                 | TAG_BIT (AIRLOCK_TLV_EV_RESULT),
  },
  [AIRLOCK_EVENT_WORKLOAD_START] = {
    .allowed = EVENT_COMMON | EVENT_PROCESS | TAG_BIT (AIRLOCK_TLV_EV_PHASE),
    .mandatory = EVENT_MANDATORY | TAG_BIT (AIRLOCK_TLV_EV_PID) | TAG_BIT (AIRLOCK_TLV_EV_PHASE),
  },
  [AIRLOCK_EVENT_WORKLOAD_EXIT] = {
    .allowed = EVENT_COMMON | EVENT_PROCESS | TAG_BIT (AIRLOCK_TLV_EV_EXIT_STATUS)
               | TAG_BIT (AIRLOCK_TLV_EV_PHASE),
    .mandatory = EVENT_MANDATORY | TAG_BIT (AIRLOCK_TLV_EV_EXIT_STATUS)
                 | TAG_BIT (AIRLOCK_TLV_EV_PHASE),
  },
  /* RESULT absent: the outcome was not seen (a NOTE says why). */
  [AIRLOCK_EVENT_WORKLOAD_EXEC] = {
    .allowed = EVENT_COMMON | TAG_BIT (AIRLOCK_TLV_EV_PHASE) | TAG_BIT (AIRLOCK_TLV_EV_NSPID)
               | TAG_BIT (AIRLOCK_TLV_EV_PATH) | TAG_BIT (AIRLOCK_TLV_EV_RESULT),
    .mandatory = EVENT_MANDATORY | TAG_BIT (AIRLOCK_TLV_EV_PHASE),
  },
};

/* Which tags each frame type may carry and must carry (protocol.h).  Every
 * tag the protocol defines for a frame is mandatory there, but the hello's
 * RECORDER (absent in a boot check, and in evidence from before it) and the
 * trailer's RECORDS_LOST (only the kprobe recorder can lose records). */
static const TlvRules frame_tlv_rules[] = {
  [AIRLOCK_FRAME_HELLO] = {
    .allowed = TAG_BIT (AIRLOCK_TLV_NONCE) | TAG_BIT (AIRLOCK_TLV_ARCH)
               | TAG_BIT (AIRLOCK_TLV_KERNEL_RELEASE) | TAG_BIT (AIRLOCK_TLV_BUILD_ID)
               | TAG_BIT (AIRLOCK_TLV_UPTIME_NS) | TAG_BIT (AIRLOCK_TLV_SECOND_OPEN_ERRNO)
               | TAG_BIT (AIRLOCK_TLV_RECORDER),
    .mandatory = TAG_BIT (AIRLOCK_TLV_NONCE) | TAG_BIT (AIRLOCK_TLV_ARCH)
                 | TAG_BIT (AIRLOCK_TLV_KERNEL_RELEASE) | TAG_BIT (AIRLOCK_TLV_BUILD_ID)
                 | TAG_BIT (AIRLOCK_TLV_UPTIME_NS) | TAG_BIT (AIRLOCK_TLV_SECOND_OPEN_ERRNO),
  },
  [AIRLOCK_FRAME_HEARTBEAT] = {
    .allowed = TAG_BIT (AIRLOCK_TLV_UPTIME_NS),
    .mandatory = TAG_BIT (AIRLOCK_TLV_UPTIME_NS),
  },
  [AIRLOCK_FRAME_TRAILER] = {
    .allowed = TAG_BIT (AIRLOCK_TLV_FRAME_COUNT) | TAG_BIT (AIRLOCK_TLV_HEARTBEAT_COUNT)
               | TAG_BIT (AIRLOCK_TLV_EVENT_COUNT) | TAG_BIT (AIRLOCK_TLV_EXIT_STATUS)
               | TAG_BIT (AIRLOCK_TLV_END_REASON) | TAG_BIT (AIRLOCK_TLV_RECORDS_LOST),
    .mandatory = TAG_BIT (AIRLOCK_TLV_FRAME_COUNT) | TAG_BIT (AIRLOCK_TLV_HEARTBEAT_COUNT)
                 | TAG_BIT (AIRLOCK_TLV_EVENT_COUNT) | TAG_BIT (AIRLOCK_TLV_EXIT_STATUS)
                 | TAG_BIT (AIRLOCK_TLV_END_REASON),
  },
  [AIRLOCK_FRAME_LOG] = {
    .allowed = TAG_BIT (AIRLOCK_TLV_MESSAGE),
    .mandatory = TAG_BIT (AIRLOCK_TLV_MESSAGE),
  },
  /* Any event tag at first; the kind then narrows it (check_event). */
  [AIRLOCK_FRAME_EVENT] = {
    .allowed = EVENT_COMMON | EVENT_PROCESS | EVENT_CALL | TAG_BIT (AIRLOCK_TLV_EV_REF)
               | TAG_BIT (AIRLOCK_TLV_EV_RESULT) | TAG_BIT (AIRLOCK_TLV_EV_EXIT_STATUS)
               | TAG_BIT (AIRLOCK_TLV_EV_PHASE),
    .mandatory = EVENT_MANDATORY,
  },
};

/* The lowest tag in @tags (not 0): the one a loop over tags in increasing
 * order would have reported first. */
static guint
lowest_tag (guint64 tags)
{
  g_assert (tags != 0);
  return (guint) __builtin_ctzll (tags);
}

/* The first mandatory tag of @rules missing from @present, as a problem
 * (transfer full) naming @kind (an event kind, or NULL for a frame's own
 * rules); NULL when none is missing.  The message is only built when it
 * is needed: this runs for every frame. */
static char *
check_mandatory (const TlvRules *rules, guint64 present, const char *kind)
{
  guint64 missing = rules->mandatory & ~present;
  guint tag;

  if (missing == 0)
    return NULL;
  tag = lowest_tag (missing);
  if (kind != NULL)
    return g_strdup_printf ("mandatory TLV %s (tag %u) is missing in a %s event",
                            airlock_tlv_tag_to_string (tag), tag, kind);
  return g_strdup_printf ("mandatory TLV %s (tag %u) is missing",
                          airlock_tlv_tag_to_string (tag), tag);
}

/* The rules that depend on an event's values: its kind's tags, and the
 * enums protocol.h defines.  Returns a problem (transfer full) or NULL. */
static char *
check_event (const AirlockFrameTlvs *tlvs, guint64 present, gsize payload_offset)
{
  guint32 kind = airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_EV_KIND]);
  const TlvRules *rules;
  guint64 disallowed;

  if (kind == 0 || kind >= G_N_ELEMENTS (event_kind_rules))
    return g_strdup_printf ("kind at byte %" G_GSIZE_FORMAT " is %u, not an event kind "
                            "(1 to %u)",
                            payload_offset + tlvs->tlv[AIRLOCK_TLV_EV_KIND].offset, kind,
                            (guint) G_N_ELEMENTS (event_kind_rules) - 1);
  rules = &event_kind_rules[kind];

  disallowed = present & ~rules->allowed;
  if (disallowed != 0)
    {
      guint tag = lowest_tag (disallowed);

      return g_strdup_printf ("tag %u (%s) at byte %" G_GSIZE_FORMAT " is not allowed in a %s "
                              "event",
                              tag, airlock_tlv_tag_to_string (tag),
                              payload_offset + tlvs->tlv[tag].offset,
                              airlock_event_kind_to_string (kind));
    }
  {
    char *missing = check_mandatory (rules, present, airlock_event_kind_to_string (kind));

    if (missing)
      return missing;
  }

  if (tlvs->present[AIRLOCK_TLV_EV_ACTION])
    {
      guint32 action = airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_EV_ACTION]);

      if (action < AIRLOCK_ACTION_CONTINUE || action > AIRLOCK_ACTION_EMULATE)
        return g_strdup_printf ("action at byte %" G_GSIZE_FORMAT " is %u, not an action "
                                "(1 to 3)",
                                payload_offset + tlvs->tlv[AIRLOCK_TLV_EV_ACTION].offset, action);
      /* A denial without its reason (or a reason on a call that went ahead)
       * would be a record nobody can act on. */
      if (action == AIRLOCK_ACTION_DENY && !tlvs->present[AIRLOCK_TLV_EV_REASON])
        return g_strdup ("mandatory TLV reason (tag 35) is missing in a denied syscall event");
      if (action != AIRLOCK_ACTION_DENY && tlvs->present[AIRLOCK_TLV_EV_REASON])
        return g_strdup_printf ("tag 35 (reason) at byte %" G_GSIZE_FORMAT " is not allowed in "
                                "a syscall event whose action is %s",
                                payload_offset + tlvs->tlv[AIRLOCK_TLV_EV_REASON].offset,
                                airlock_event_action_to_string (action));
    }
  if (tlvs->present[AIRLOCK_TLV_EV_REASON])
    {
      guint32 reason = airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_EV_REASON]);

      if (reason == 0 || reason >= G_N_ELEMENTS (deny_reason_names))
        return g_strdup_printf ("reason at byte %" G_GSIZE_FORMAT " is %u, not a deny reason "
                                "(1 to %u)",
                                payload_offset + tlvs->tlv[AIRLOCK_TLV_EV_REASON].offset, reason,
                                (guint) G_N_ELEMENTS (deny_reason_names) - 1);
    }
  return NULL;
}

/* present[] from its mask, four entries (one nibble) at a time: a store
 * per entry, or a memset first, costs more than the rest of a parse. */
static void
tlvs_set_present (AirlockFrameTlvs *tlvs, guint64 present)
{
  static const gboolean nibbles[16][4] = {
    { 0, 0, 0, 0 }, { 1, 0, 0, 0 }, { 0, 1, 0, 0 }, { 1, 1, 0, 0 },
    { 0, 0, 1, 0 }, { 1, 0, 1, 0 }, { 0, 1, 1, 0 }, { 1, 1, 1, 0 },
    { 0, 0, 0, 1 }, { 1, 0, 0, 1 }, { 0, 1, 0, 1 }, { 1, 1, 0, 1 },
    { 0, 0, 1, 1 }, { 1, 0, 1, 1 }, { 0, 1, 1, 1 }, { 1, 1, 1, 1 },
  };

  G_STATIC_ASSERT (G_N_ELEMENTS (tlvs->present) % 4 == 0);
  for (guint t = 0; t < G_N_ELEMENTS (tlvs->present); t += 4)
    memcpy (&tlvs->present[t], nibbles[(present >> t) & 0xf], sizeof nibbles[0]);
}

gboolean
airlock_frame_parse_tlvs (guint type, const guint8 *payload, gsize len, gsize payload_offset,
                          AirlockFrameTlvs *tlvs, char **ret_problem)
{
  guint64 present = 0;   /* tlvs->present as a mask, for the rule checks */
  guint64 allowed;
  guint n_tlvs = 0;
  const TlvRules *rules;
  gsize pos = 0;

  g_return_val_if_fail (airlock_frame_type_is_known (type), FALSE);
  g_return_val_if_fail (payload != NULL || len == 0, FALSE);
  g_return_val_if_fail (tlvs != NULL, FALSE);
  g_return_val_if_fail (ret_problem != NULL && *ret_problem == NULL, FALSE);

  g_assert (type < G_N_ELEMENTS (frame_tlv_rules));
  rules = &frame_tlv_rules[type];
  allowed = rules->allowed;

  /* This runs for every frame: an entry of tlv[] is written when its tag
   * is found, and read only where present[] says so; present[] and n_tlvs
   * are written at the end, from the mask.
   *
   * The same walk as airlock_tlv_iter_next(), inline: every test compares
   * a wire length against what is left of the payload, never adds one to
   * a position, so nothing here can overflow or read past @len. */
  while (pos < len)
    {
      gsize left = len - pos;
      gsize at = payload_offset + pos;
      guint16 tag, value_len;
      AirlockTlv *tlv;

      if (left < AIRLOCK_TLV_HEADER_SIZE)
        {
          *ret_problem = g_strdup_printf ("the TLV at byte %" G_GSIZE_FORMAT " runs past the end "
                                          "of the payload: %" G_GSIZE_FORMAT " bytes left, "
                                          "a TLV header needs %d",
                                          at, left, AIRLOCK_TLV_HEADER_SIZE);
          return FALSE;
        }
      value_len = wire_get_le16 (payload + pos + 2);
      if (value_len > left - AIRLOCK_TLV_HEADER_SIZE)
        {
          *ret_problem = g_strdup_printf ("the TLV at byte %" G_GSIZE_FORMAT " runs past the end "
                                          "of the payload: it declares %u bytes of value, only %"
                                          G_GSIZE_FORMAT " are left",
                                          at, value_len, left - AIRLOCK_TLV_HEADER_SIZE);
          return FALSE;
        }
      tag = wire_get_le16 (payload + pos);

      n_tlvs++;
      if (tag > AIRLOCK_TLV_TAG_MAX || !(allowed & TAG_BIT (tag)))
        {
          *ret_problem = g_strdup_printf ("tag %u (%s) at byte %" G_GSIZE_FORMAT
                                          " is not allowed in a %s frame",
                                          tag, airlock_tlv_tag_to_string (tag), at,
                                          airlock_frame_type_to_string (type));
          return FALSE;
        }
      if (present & TAG_BIT (tag))
        {
          *ret_problem = g_strdup_printf ("TLV %s (tag %u) appears twice, again at byte %"
                                          G_GSIZE_FORMAT,
                                          airlock_tlv_tag_to_string (tag), tag, at);
          return FALSE;
        }
      if (tlv_sizes[tag] != 0 && value_len != tlv_sizes[tag])
        {
          *ret_problem = g_strdup_printf ("TLV %s (tag %u) at byte %" G_GSIZE_FORMAT
                                          " is %u bytes long, must be exactly %u",
                                          airlock_tlv_tag_to_string (tag), tag, at,
                                          value_len, tlv_sizes[tag]);
          return FALSE;
        }
      if (tlv_max_lens[tag] != 0 && value_len > tlv_max_lens[tag])
        {
          *ret_problem = g_strdup_printf ("TLV %s (tag %u) at byte %" G_GSIZE_FORMAT
                                          " is %u bytes long, at most %u are allowed",
                                          airlock_tlv_tag_to_string (tag), tag, at,
                                          value_len, tlv_max_lens[tag]);
          return FALSE;
        }
      present |= TAG_BIT (tag);
      tlv = &tlvs->tlv[tag];
      tlv->tag = tag;
      tlv->len = value_len;
      tlv->value = payload + pos + AIRLOCK_TLV_HEADER_SIZE;
      tlv->offset = pos;
      pos += AIRLOCK_TLV_HEADER_SIZE + value_len;
    }

  tlvs_set_present (tlvs, present);
  tlvs->n_tlvs = n_tlvs;

  *ret_problem = check_mandatory (rules, present, NULL);
  if (*ret_problem == NULL && type == AIRLOCK_FRAME_EVENT)
    *ret_problem = check_event (tlvs, present, payload_offset);
  return *ret_problem == NULL;
}

gboolean
airlock_frame_check_tlvs (guint type, const guint8 *payload, gsize len, gsize payload_offset,
                          AirlockFrameTlvs *ret_tlvs, char **ret_problem)
{
  /* Zeroed whole, so the entries of absent tags read as 0 as they always
   * have; and copied out only on success. */
  AirlockFrameTlvs tlvs = { { FALSE } };

  g_return_val_if_fail (airlock_frame_type_is_known (type), FALSE);
  g_return_val_if_fail (payload != NULL || len == 0, FALSE);
  g_return_val_if_fail (ret_problem != NULL && *ret_problem == NULL, FALSE);

  if (!airlock_frame_parse_tlvs (type, payload, len, payload_offset, &tlvs, ret_problem))
    return FALSE;
  if (ret_tlvs)
    *ret_tlvs = tlvs;
  return TRUE;
}

/* Per thread: the payload is published and looked up on the same call
 * stack (the channel's feed(), its frame func, the event log), and no
 * other thread may take another's word for a check. */
static _Thread_local const AirlockCheckedPayload *published_checked;

const AirlockCheckedPayload *
airlock_frame_publish_checked (const AirlockCheckedPayload *checked)
{
  const AirlockCheckedPayload *previous = published_checked;

  published_checked = checked;
  return previous;
}

const AirlockFrameTlvs *
airlock_frame_find_checked (GBytes *payload, guint type)
{
  const AirlockCheckedPayload *checked = published_checked;

  if (payload != NULL && checked != NULL && checked->payload == payload
      && checked->type == type)
    return checked->tlvs;
  return NULL;
}

guint32
airlock_tlv_get_u32 (const AirlockTlv *tlv)
{
  g_return_val_if_fail (tlv != NULL && tlv->len == 4, 0);
  return wire_get_le32 (tlv->value);
}

guint64
airlock_tlv_get_u64 (const AirlockTlv *tlv)
{
  g_return_val_if_fail (tlv != NULL && tlv->len == 8, 0);
  return wire_get_le64 (tlv->value);
}

/* Characters that are valid, printable-looking UTF-8 but can make stored
 * text lie when it is shown: C1 controls, line/paragraph separators and the
 * bidirectional controls of "Trojan Source" (CVE-2021-42574).  A fixed list
 * rather than g_unichar_isprint(): the escaping must not depend on the
 * Unicode tables of whichever GLib runs `airlock verify`. */
static gboolean
unichar_disguises_text (gunichar c)
{
  return (c >= 0x80 && c <= 0x9f)
         || c == 0x061c                    /* arabic letter mark */
         || c == 0x200e || c == 0x200f     /* LRM, RLM */
         || c == 0x2028 || c == 0x2029     /* line, paragraph separator */
         || (c >= 0x202a && c <= 0x202e)   /* LRE … RLO */
         || (c >= 0x2066 && c <= 0x2069)   /* LRI … PDI */
         || c == 0xfeff;                   /* BOM / zero-width no-break space */
}

char *
airlock_evidence_escape_bytes (const guint8 *data, gsize len)
{
  GString *out;
  gsize i = 0;

  g_return_val_if_fail (data != NULL || len == 0, NULL);

  /* Most guest strings (paths, arguments) are printable ASCII, which comes
   * out unchanged: one exact allocation instead of a GString's.  Anything
   * else, however rare, takes the full path below. */
  while (i < len && data[i] >= 0x20 && data[i] < 0x7f && data[i] != '\\')
    i++;
  if (i == len)
    {
      char *plain = g_malloc (len + 1);

      if (len > 0)
        memcpy (plain, data, len);
      plain[len] = '\0';
      return plain;
    }

  /* The prefix already scanned is plain ASCII: copied as it is. */
  out = g_string_sized_new (len + 1);
  g_string_append_len (out, (const char *) data, (gssize) i);
  while (i < len)
    {
      guint8 b = data[i];
      gunichar c;
      const guint8 *next;

      if (b < 0x80)
        {
          switch (b)
            {
            case '\\':
              g_string_append (out, "\\\\");
              break;
            case '\n':
              g_string_append (out, "\\n");
              break;
            case '\r':
              g_string_append (out, "\\r");
              break;
            case '\t':
              g_string_append (out, "\\t");
              break;
            default:
              if (b < 0x20 || b == 0x7f)
                g_string_append_printf (out, "\\x%02x", b);
              else
                g_string_append_c (out, (char) b);
              break;
            }
          i++;
          continue;
        }

      /* Bounded by what is left, so a truncated sequence at the end is
       * reported (-2) rather than read past. */
      c = g_utf8_get_char_validated ((const char *) data + i, (gssize) MIN (len - i, 6));
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (out, "\\x%02x", b);
          i++;
          continue;
        }
      next = (const guint8 *) g_utf8_next_char ((const char *) data + i);
      if (unichar_disguises_text (c))
        g_string_append_printf (out, "\\u{%04x}", c);
      else
        g_string_append_len (out, (const char *) data + i, next - (data + i));
      i = (gsize) (next - data);
    }
  return g_string_free (out, FALSE);
}
