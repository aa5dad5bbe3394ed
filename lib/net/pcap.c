/* Classic pcap reader (see pcap.h).
 *
 * Every read is checked against the bytes left (remaining()), computed so
 * no offset plus a length can overflow; the only loop is the caller's, one
 * record per call, and the record count is capped. */
#include "config.h"

#include "pcap.h"

#include <string.h>

G_DEFINE_QUARK (airlock-pcap-error-quark, airlock_pcap_error)

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du

struct _AirlockPcapReader {
  GBytes *bytes;
  const guint8 *data;
  gsize len;
  gsize offset;         /* of the next record header */
  gboolean swapped;     /* the file's byte order is not little-endian */
  gboolean nanoseconds;
  guint32 snaplen;
  guint32 linktype;
  guint64 records;      /* records returned so far */
  GError *failure;      /* the error returned once, returned again */
};

static guint32
get_u32 (const AirlockPcapReader *reader, const guint8 *p)
{
  if (reader->swapped)
    return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16) | ((guint32) p[3] << 24);
}

static guint16
get_u16 (const AirlockPcapReader *reader, const guint8 *p)
{
  if (reader->swapped)
    return (guint16) ((p[0] << 8) | p[1]);
  return (guint16) (p[0] | (p[1] << 8));
}

AirlockPcapReader *
airlock_pcap_reader_new (GBytes *pcap, GError **error)
{
  g_autoptr (AirlockPcapReader) reader = g_new0 (AirlockPcapReader, 1);
  guint32 magic_le;
  guint16 major, minor;

  g_return_val_if_fail (pcap != NULL, NULL);

  reader->bytes = g_bytes_ref (pcap);
  reader->data = g_bytes_get_data (pcap, &reader->len);

  if (reader->len < AIRLOCK_PCAP_HEADER_SIZE)
    {
      g_set_error (error, AIRLOCK_PCAP_ERROR, AIRLOCK_PCAP_ERROR_TRUNCATED,
                   "pcap file header truncated: %" G_GSIZE_FORMAT " of %d bytes at offset 0",
                   reader->len, AIRLOCK_PCAP_HEADER_SIZE);
      return NULL;
    }

  magic_le = get_u32 (reader, reader->data);
  if (magic_le == PCAP_MAGIC_US || magic_le == PCAP_MAGIC_NS)
    reader->swapped = FALSE;
  else if (GUINT32_SWAP_LE_BE (magic_le) == PCAP_MAGIC_US
           || GUINT32_SWAP_LE_BE (magic_le) == PCAP_MAGIC_NS)
    reader->swapped = TRUE;
  else
    {
      g_set_error (error, AIRLOCK_PCAP_ERROR, AIRLOCK_PCAP_ERROR_BAD_MAGIC,
                   "not a pcap file: magic 0x%08x at offset 0", magic_le);
      return NULL;
    }
  reader->nanoseconds = get_u32 (reader, reader->data) == PCAP_MAGIC_NS;

  major = get_u16 (reader, reader->data + 4);
  minor = get_u16 (reader, reader->data + 6);
  if (major != 2)
    {
      g_set_error (error, AIRLOCK_PCAP_ERROR, AIRLOCK_PCAP_ERROR_UNSUPPORTED,
                   "unsupported pcap version %u.%u at offset 4", major, minor);
      return NULL;
    }
  reader->snaplen = get_u32 (reader, reader->data + 16);
  if (reader->snaplen == 0 || reader->snaplen > AIRLOCK_PCAP_SNAPLEN_MAX)
    {
      g_set_error (error, AIRLOCK_PCAP_ERROR, AIRLOCK_PCAP_ERROR_INVALID,
                   "pcap snapshot length %u at offset 16 is outside 1–%d", reader->snaplen,
                   AIRLOCK_PCAP_SNAPLEN_MAX);
      return NULL;
    }
  /* The upper 16 bits may carry FCS flags (pcap-savefile(5)); the link
   * type is the lower 16. */
  reader->linktype = get_u32 (reader, reader->data + 20) & 0xffffu;
  if (reader->linktype != AIRLOCK_PCAP_LINKTYPE_ETHERNET)
    {
      g_set_error (error, AIRLOCK_PCAP_ERROR, AIRLOCK_PCAP_ERROR_UNSUPPORTED,
                   "unsupported pcap link type %u at offset 20 (expected Ethernet, 1)",
                   reader->linktype);
      return NULL;
    }
  reader->offset = AIRLOCK_PCAP_HEADER_SIZE;
  return g_steal_pointer (&reader);
}

void
airlock_pcap_reader_free (AirlockPcapReader *reader)
{
  if (reader == NULL)
    return;
  g_bytes_unref (reader->bytes);
  g_clear_error (&reader->failure);
  g_free (reader);
}

static gboolean
fail (AirlockPcapReader *reader, GError **error, AirlockPcapError code, const char *message)
{
  reader->failure = g_error_new_literal (AIRLOCK_PCAP_ERROR, code, message);
  g_propagate_error (error, g_error_copy (reader->failure));
  return FALSE;
}

gboolean
airlock_pcap_reader_next (AirlockPcapReader *reader, AirlockPcapRecord *ret, GError **error)
{
  const guint8 *h;
  gsize remaining;
  guint32 sec, subsec, caplen, origlen;
  g_autofree char *message = NULL;

  g_return_val_if_fail (reader != NULL, FALSE);
  g_return_val_if_fail (ret != NULL, FALSE);

  if (reader->failure != NULL)
    {
      g_propagate_error (error, g_error_copy (reader->failure));
      return FALSE;
    }

  remaining = reader->len - reader->offset;
  if (remaining == 0)
    return FALSE;
  if (reader->records >= AIRLOCK_PCAP_RECORDS_MAX)
    {
      message = g_strdup_printf ("pcap record at offset %" G_GSIZE_FORMAT
                                 " is past the limit of %d records",
                                 reader->offset, AIRLOCK_PCAP_RECORDS_MAX);
      return fail (reader, error, AIRLOCK_PCAP_ERROR_TOO_MANY, message);
    }
  if (remaining < AIRLOCK_PCAP_RECORD_HEADER_SIZE)
    {
      message = g_strdup_printf ("pcap record %" G_GUINT64_FORMAT " truncated: header at offset %"
                                 G_GSIZE_FORMAT " has %" G_GSIZE_FORMAT " of %d bytes",
                                 reader->records, reader->offset, remaining,
                                 AIRLOCK_PCAP_RECORD_HEADER_SIZE);
      return fail (reader, error, AIRLOCK_PCAP_ERROR_TRUNCATED, message);
    }

  h = reader->data + reader->offset;
  sec = get_u32 (reader, h);
  subsec = get_u32 (reader, h + 4);
  caplen = get_u32 (reader, h + 8);
  origlen = get_u32 (reader, h + 12);

  if (subsec >= (reader->nanoseconds ? 1000000000u : 1000000u))
    {
      message = g_strdup_printf ("pcap record %" G_GUINT64_FORMAT " at offset %" G_GSIZE_FORMAT
                                 ": sub-second timestamp %u out of range",
                                 reader->records, reader->offset + 4, subsec);
      return fail (reader, error, AIRLOCK_PCAP_ERROR_INVALID, message);
    }
  if (caplen > reader->snaplen)
    {
      message = g_strdup_printf ("pcap record %" G_GUINT64_FORMAT " at offset %" G_GSIZE_FORMAT
                                 ": captured length %u exceeds the snapshot length %u",
                                 reader->records, reader->offset + 8, caplen, reader->snaplen);
      return fail (reader, error, AIRLOCK_PCAP_ERROR_INVALID, message);
    }
  if (caplen > origlen)
    {
      message = g_strdup_printf ("pcap record %" G_GUINT64_FORMAT " at offset %" G_GSIZE_FORMAT
                                 ": captured length %u exceeds the original length %u",
                                 reader->records, reader->offset + 8, caplen, origlen);
      return fail (reader, error, AIRLOCK_PCAP_ERROR_INVALID, message);
    }
  if (remaining - AIRLOCK_PCAP_RECORD_HEADER_SIZE < caplen)
    {
      message = g_strdup_printf ("pcap record %" G_GUINT64_FORMAT " truncated: %u bytes of data"
                                 " at offset %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT " present",
                                 reader->records, caplen,
                                 reader->offset + AIRLOCK_PCAP_RECORD_HEADER_SIZE,
                                 remaining - AIRLOCK_PCAP_RECORD_HEADER_SIZE);
      return fail (reader, error, AIRLOCK_PCAP_ERROR_TRUNCATED, message);
    }

  ret->index = reader->records;
  ret->offset = reader->offset;
  ret->time_us = (gint64) sec * G_USEC_PER_SEC
                 + (reader->nanoseconds ? subsec / 1000u : subsec);
  ret->caplen = caplen;
  ret->origlen = origlen;
  ret->data = h + AIRLOCK_PCAP_RECORD_HEADER_SIZE;

  reader->offset += AIRLOCK_PCAP_RECORD_HEADER_SIZE + caplen;
  reader->records++;
  return TRUE;
}

guint32
airlock_pcap_reader_get_snaplen (AirlockPcapReader *reader)
{
  g_return_val_if_fail (reader != NULL, 0);
  return reader->snaplen;
}

guint32
airlock_pcap_reader_get_linktype (AirlockPcapReader *reader)
{
  g_return_val_if_fail (reader != NULL, 0);
  return reader->linktype;
}
