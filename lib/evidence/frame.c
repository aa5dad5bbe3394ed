/* Evidence frames: header parsing, TLV iteration, per-type TLV rules.
 *
 * Everything here reads bytes a hostile guest wrote.  Lengths from the wire
 * are compared against the bytes actually present before any read, and the
 * header length against AIRLOCK_FRAME_MAX_PAYLOAD before the caller waits for
 * (or buffers) a payload. */
#include "config.h"

#include "frame-private.h"

#include "wire.h"

G_STATIC_ASSERT (AIRLOCK_TLV_TAG_MAX < 32);  /* tag masks below are guint32 */

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
  [AIRLOCK_TLV_FRAME_COUNT] = "frame-count",
  [AIRLOCK_TLV_HEARTBEAT_COUNT] = "heartbeat-count",
  [AIRLOCK_TLV_EVENT_COUNT] = "event-count",
  [AIRLOCK_TLV_EXIT_STATUS] = "exit-status",
  [AIRLOCK_TLV_END_REASON] = "end-reason",
  [AIRLOCK_TLV_MESSAGE] = "message",
};

const char *
airlock_tlv_tag_to_string (guint tag)
{
  if (tag <= AIRLOCK_TLV_TAG_MAX && tlv_tag_names[tag] != NULL)
    return tlv_tag_names[tag];
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
  [AIRLOCK_TLV_FRAME_COUNT] = 8,
  [AIRLOCK_TLV_HEARTBEAT_COUNT] = 8,
  [AIRLOCK_TLV_EVENT_COUNT] = 8,
  [AIRLOCK_TLV_EXIT_STATUS] = 4,
  [AIRLOCK_TLV_END_REASON] = 4,
};

#define TAG_BIT(tag) (1u << (tag))

typedef struct {
  guint32 allowed;
  guint32 mandatory;
} TlvRules;

/* Which tags each frame type may carry and must carry (protocol.h).  Every
 * tag the protocol defines for a frame is mandatory there today. */
static const TlvRules frame_tlv_rules[] = {
  [AIRLOCK_FRAME_HELLO] = {
    .allowed = TAG_BIT (AIRLOCK_TLV_NONCE) | TAG_BIT (AIRLOCK_TLV_ARCH)
               | TAG_BIT (AIRLOCK_TLV_KERNEL_RELEASE) | TAG_BIT (AIRLOCK_TLV_BUILD_ID)
               | TAG_BIT (AIRLOCK_TLV_UPTIME_NS) | TAG_BIT (AIRLOCK_TLV_SECOND_OPEN_ERRNO),
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
               | TAG_BIT (AIRLOCK_TLV_END_REASON),
    .mandatory = TAG_BIT (AIRLOCK_TLV_FRAME_COUNT) | TAG_BIT (AIRLOCK_TLV_HEARTBEAT_COUNT)
                 | TAG_BIT (AIRLOCK_TLV_EVENT_COUNT) | TAG_BIT (AIRLOCK_TLV_EXIT_STATUS)
                 | TAG_BIT (AIRLOCK_TLV_END_REASON),
  },
  [AIRLOCK_FRAME_LOG] = {
    .allowed = TAG_BIT (AIRLOCK_TLV_MESSAGE),
    .mandatory = TAG_BIT (AIRLOCK_TLV_MESSAGE),
  },
};

gboolean
airlock_frame_check_tlvs (guint type, const guint8 *payload, gsize len, gsize payload_offset,
                          AirlockFrameTlvs *ret_tlvs, char **ret_problem)
{
  AirlockFrameTlvs tlvs = { { FALSE } };
  AirlockTlvIter iter;
  AirlockTlv tlv;
  AirlockTlvIterResult res;
  const TlvRules *rules = NULL;

  g_return_val_if_fail (airlock_frame_type_is_known (type), FALSE);
  g_return_val_if_fail (payload != NULL || len == 0, FALSE);
  g_return_val_if_fail (ret_problem != NULL && *ret_problem == NULL, FALSE);

  if (type != AIRLOCK_FRAME_EVENT)
    {
      g_assert (type < G_N_ELEMENTS (frame_tlv_rules));
      rules = &frame_tlv_rules[type];
    }

  airlock_tlv_iter_init (&iter, payload, len);
  while ((res = airlock_tlv_iter_next (&iter, &tlv)) == AIRLOCK_TLV_ITER_ITEM)
    {
      gsize at = payload_offset + tlv.offset;

      tlvs.n_tlvs++;
      /* EVENT records are the supervisor's, and their tags are not fixed
       * yet: for now they only need to be well-formed TLVs. */
      if (rules == NULL)
        continue;

      if (tlv.tag > AIRLOCK_TLV_TAG_MAX || !(rules->allowed & TAG_BIT (tlv.tag)))
        {
          *ret_problem = g_strdup_printf ("tag %u (%s) at byte %" G_GSIZE_FORMAT
                                          " is not allowed in a %s frame",
                                          tlv.tag, airlock_tlv_tag_to_string (tlv.tag), at,
                                          airlock_frame_type_to_string (type));
          return FALSE;
        }
      if (tlvs.present[tlv.tag])
        {
          *ret_problem = g_strdup_printf ("TLV %s (tag %u) appears twice, again at byte %"
                                          G_GSIZE_FORMAT,
                                          airlock_tlv_tag_to_string (tlv.tag), tlv.tag, at);
          return FALSE;
        }
      if (tlv_sizes[tlv.tag] != 0 && tlv.len != tlv_sizes[tlv.tag])
        {
          *ret_problem = g_strdup_printf ("TLV %s (tag %u) at byte %" G_GSIZE_FORMAT
                                          " is %u bytes long, must be exactly %u",
                                          airlock_tlv_tag_to_string (tlv.tag), tlv.tag, at,
                                          tlv.len, tlv_sizes[tlv.tag]);
          return FALSE;
        }
      tlvs.present[tlv.tag] = TRUE;
      tlvs.tlv[tlv.tag] = tlv;
    }

  if (res == AIRLOCK_TLV_ITER_TRUNCATED)
    {
      gsize left = len - iter.pos;

      if (left < AIRLOCK_TLV_HEADER_SIZE)
        *ret_problem = g_strdup_printf ("the TLV at byte %" G_GSIZE_FORMAT " runs past the end "
                                        "of the payload: %" G_GSIZE_FORMAT " bytes left, "
                                        "a TLV header needs %d",
                                        payload_offset + iter.pos, left, AIRLOCK_TLV_HEADER_SIZE);
      else
        *ret_problem = g_strdup_printf ("the TLV at byte %" G_GSIZE_FORMAT " runs past the end "
                                        "of the payload: it declares %u bytes of value, only %"
                                        G_GSIZE_FORMAT " are left",
                                        payload_offset + iter.pos,
                                        wire_get_le16 (payload + iter.pos + 2),
                                        left - AIRLOCK_TLV_HEADER_SIZE);
      return FALSE;
    }

  if (rules != NULL)
    for (guint tag = 0; tag <= AIRLOCK_TLV_TAG_MAX; tag++)
      if ((rules->mandatory & TAG_BIT (tag)) && !tlvs.present[tag])
        {
          *ret_problem = g_strdup_printf ("mandatory TLV %s (tag %u) is missing",
                                          airlock_tlv_tag_to_string (tag), tag);
          return FALSE;
        }

  if (ret_tlvs)
    *ret_tlvs = tlvs;
  return TRUE;
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

  out = g_string_sized_new (len + 1);
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
