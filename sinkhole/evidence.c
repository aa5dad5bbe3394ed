/* The sinkhole's evidence: the capture of every frame either way (classic
 * pcap) and the records, one JSON line per exchange (sinkhole.h), then a
 * final line. */
#include "server.h"

#include "bounds-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

gint64
sinkhole_now_us (Sinkhole *sh)
{
  return g_get_monotonic_time () - sh->start_us;
}

void
sinkhole_write_record (Sinkhole *sh, AirlockSinkholeRecord *rec)
{
  g_autofree char *line = NULL;

  if (sh->records_written >= AIRLOCK_SINKHOLE_RECORDS_MAX)
    {
      sh->records_dropped++;
      return;
    }
  if (!rec->name && rec->kind != AIRLOCK_SINKHOLE_RECORD_DNS)
    {
      const char *name = airlock_sinkhole_names_reverse (sh->names, rec->family, rec->address);
      rec->name = g_strdup (name);
    }
  line = airlock_sinkhole_record_to_json (rec);
  fprintf (sh->records, "%s\n", line);
  fflush (sh->records);
  sh->records_written++;
}

AirlockSinkholeRecord *
sinkhole_record_new (Sinkhole *sh, AirlockSinkholeRecordKind kind, int family,
                     const guint8 *address, guint16 port, guint16 client_port)
{
  AirlockSinkholeRecord *rec = g_new0 (AirlockSinkholeRecord, 1);
  char text[INET6_ADDRSTRLEN];

  rec->kind = kind;
  rec->time_us = rec->end_us = sinkhole_now_us (sh);
  rec->family = family;
  memcpy (rec->address, address, family == AF_INET ? 4 : 16);
  inet_ntop (family, address, text, sizeof text);
  rec->address_text = g_strdup (text);
  rec->port = port;
  rec->client_port = client_port;
  rec->dns.answers = g_ptr_array_new_with_free_func (g_free);
  rec->client_bytes = g_bytes_new (NULL, 0);
  rec->server_bytes = g_bytes_new (NULL, 0);
  return rec;
}

/* Classic pcap, written here by hand: 24 bytes of header and 16 per record
 * (libpcap's pcap_dump would bring a library for what is two structs and a
 * write). */
static void
pcap_write (Sinkhole *sh, const guint8 *data, gsize len, gsize record_len)
{
  gsize done = 0;

  while (done < len)
    {
      ssize_t n = write (sh->pcap_fd, data + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          /* A capture that cannot be written is not whole: stop the
           * network (frames are no longer passed) and say so at the end. */
          sh->pcap_failed = TRUE;
          sh->pcap_full = TRUE;
          return;
        }
      done += (gsize) n;
    }
  sh->pcap_bytes += record_len;
}

void
sinkhole_capture_start (Sinkhole *sh)
{
  guint8 h[24] = { 0 };
  guint32 magic = 0xa1b2c3d4u, snaplen = FRAME_MAX, linktype = 1;
  guint16 major = 2, minor = 4;

  memcpy (h, &magic, 4);
  memcpy (h + 4, &major, 2);
  memcpy (h + 6, &minor, 2);
  memcpy (h + 16, &snaplen, 4);
  memcpy (h + 20, &linktype, 4);
  pcap_write (sh, h, sizeof h, sizeof h);
}

/* Writes one frame; FALSE when it must not be passed on (the capture is
 * full or failed). */
gboolean
sinkhole_capture_frame (Sinkhole *sh, const guint8 *frame, gsize len)
{
  guint8 rh[16];
  gint64 t = g_get_real_time ();
  guint32 sec = (guint32) (t / G_USEC_PER_SEC), usec = (guint32) (t % G_USEC_PER_SEC);
  guint32 l = (guint32) len;

  if (sh->pcap_full)
    return FALSE;
  if (sh->pcap_bytes + 16 + len > AIRLOCK_BOUND_CAPTURE - 1)
    {
      sh->pcap_full = TRUE;
      return FALSE;
    }
  memcpy (rh, &sec, 4);
  memcpy (rh + 4, &usec, 4);
  memcpy (rh + 8, &l, 4);
  memcpy (rh + 12, &l, 4);
  pcap_write (sh, rh, 16, 16);
  if (!sh->pcap_full)
    pcap_write (sh, frame, len, len);
  return !sh->pcap_full;
}

void
sinkhole_write_end (Sinkhole *sh)
{
  g_autofree char *end = airlock_sinkhole_end_line_to_json (sh->records_dropped, sh->frames_refused,
                                                            sh->first_refused);

  fprintf (sh->records, "%s\n", end);
  if (fflush (sh->records) != 0 || fsync (fileno (sh->records)) != 0)
    g_printerr ("airlock-sinkhole: cannot write the records: %s\n", g_strerror (errno));
  if (sh->pcap_failed)
    g_printerr ("airlock-sinkhole: the capture could not be written whole\n");
  if (fsync (sh->pcap_fd) != 0)
    g_printerr ("airlock-sinkhole: cannot write the capture: %s\n", g_strerror (errno));
}
