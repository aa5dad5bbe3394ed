/* A bounded reader of classic libpcap files, as QEMU's `-object
 * filter-dump` writes them (net/dump.c: magic 0xa1b2c3d4 in the host's byte
 * order, version 2.4, LINKTYPE_ETHERNET, microsecond timestamps).
 *
 * The host writes the framing and the guest controls only the bytes inside
 * each packet, but the file is parsed as if it were hostile anyway: every
 * length is checked against the bytes present and against the snapshot
 * length before it is used, the snapshot length and the number of records
 * are capped, and every error names the byte offset where the file stops
 * making sense.  Both byte orders and the nanosecond variant (0xa1b23c4d)
 * are read, so a file from tcpdump or another host reads the same.
 *
 * Internal to libairlock (not installed). */
#pragma once

#include "airlock-macros.h"

G_BEGIN_DECLS

#define AIRLOCK_PCAP_HEADER_SIZE 24
#define AIRLOCK_PCAP_RECORD_HEADER_SIZE 16
/* libpcap's own MAXIMUM_SNAPLEN: no writer asks for more, so a larger
 * snapshot length is a broken file, not a big packet. */
#define AIRLOCK_PCAP_SNAPLEN_MAX 262144
/* Far more frames than a gated run sends; the analysis is linear in the
 * records, so the cap bounds its time whatever the file says. */
#define AIRLOCK_PCAP_RECORDS_MAX 4000000
#define AIRLOCK_PCAP_LINKTYPE_ETHERNET 1

#define AIRLOCK_PCAP_ERROR (airlock_pcap_error_quark ())
GQuark airlock_pcap_error_quark (void);

typedef enum {
  AIRLOCK_PCAP_ERROR_TRUNCATED,   /* ends inside the file header or a record */
  AIRLOCK_PCAP_ERROR_BAD_MAGIC,   /* not a classic pcap file */
  AIRLOCK_PCAP_ERROR_UNSUPPORTED, /* a version or link type this reader does not take */
  AIRLOCK_PCAP_ERROR_INVALID,     /* a length or timestamp no writer produces */
  AIRLOCK_PCAP_ERROR_TOO_MANY,    /* more than AIRLOCK_PCAP_RECORDS_MAX records */
} AirlockPcapError;

typedef struct _AirlockPcapReader AirlockPcapReader;

typedef struct {
  guint64 index;        /* 0 for the first record */
  gsize offset;         /* of the record header in the file */
  gint64 time_us;       /* capture time, microseconds since the epoch */
  guint32 caplen;       /* bytes present in @data */
  guint32 origlen;      /* bytes the frame had on the wire (>= caplen) */
  const guint8 *data;   /* points into the reader's GBytes: valid while it lives */
} AirlockPcapRecord;

/* Reads and checks the 24-byte file header of @pcap (a reference is
 * taken).  Returns NULL with @error set (AIRLOCK_PCAP_ERROR) when it is
 * truncated, has an unknown magic, a version other than 2.x, a link type
 * other than Ethernet, or a snapshot length of 0 or above
 * AIRLOCK_PCAP_SNAPLEN_MAX.  Transfer full. */
AirlockPcapReader *airlock_pcap_reader_new (GBytes *pcap, GError **error);
void airlock_pcap_reader_free (AirlockPcapReader *reader);

/* The next record.  Returns TRUE and fills @ret; FALSE with @error unset
 * at the end of the file; FALSE with @error set when the record is cut
 * short, its captured length exceeds the snapshot length or its original
 * length, its sub-second field is out of range, or it would be record
 * number AIRLOCK_PCAP_RECORDS_MAX + 1.  After an error, every later call
 * returns the same error again: a reader never skips over a bad record. */
gboolean airlock_pcap_reader_next (AirlockPcapReader *reader, AirlockPcapRecord *ret,
                                   GError **error);

guint32 airlock_pcap_reader_get_snaplen (AirlockPcapReader *reader);
guint32 airlock_pcap_reader_get_linktype (AirlockPcapReader *reader);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockPcapReader, airlock_pcap_reader_free)

G_END_DECLS
