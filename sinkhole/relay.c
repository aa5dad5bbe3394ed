/* The relay: QEMU's NIC stream (a 4-byte big-endian length, then the
 * frame) ⇄ the tap.  Every frame either way is captured before it is
 * passed on; a frame QEMU's side sends under another source MAC than the
 * guest's NIC is refused and counted.  What no listener sees as such (UDP
 * other than DNS, ICMP echo) is recorded here from the frame. */
#define _GNU_SOURCE
#include "server.h"

#include "net/net-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib-unix.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* What the guest sent that no listener sees as such: UDP datagrams (the
 * drain cannot learn their destination through the redirect) and ICMP echo
 * requests (the kernel answers them).  DNS datagrams' destinations are
 * remembered for the DNS listener's records. */
static void
note_guest_frame (Sinkhole *sh, const guint8 *frame, gsize len)
{
  NetPacket pkt;

  if (len < 14 || memcmp (frame + 6, sinkhole_gateway_mac, 6) == 0)
    return;
  net_decode_frame (frame, len, len, &pkt);
  if (!pkt.family || !pkt.have_transport)
    return;
  if (pkt.protocol == IPPROTO_UDP && pkt.dst_port == PORT_DNS)
    {
      char text[INET6_ADDRSTRLEN];

      inet_ntop (pkt.family, pkt.dst, text, sizeof text);
      g_hash_table_insert (sh->dns_dest,
                           GUINT_TO_POINTER (((guint) pkt.family << 16) | pkt.src_port),
                           g_strdup (text));
    }
  else if (pkt.protocol == IPPROTO_UDP && !pkt.later_fragment)
    {
      AirlockSinkholeRecord *rec = sinkhole_record_new (sh, AIRLOCK_SINKHOLE_RECORD_UDP,
                                                        pkt.family, pkt.dst, pkt.dst_port,
                                                        pkt.src_port);

      g_bytes_unref (rec->client_bytes);
      rec->client_bytes = g_bytes_new (pkt.payload, MIN (pkt.payload_len,
                                                         AIRLOCK_SINKHOLE_DATAGRAM_BYTES_MAX));
      rec->bytes_in = pkt.payload_wire_len;
      sinkhole_write_record (sh, rec);
      airlock_sinkhole_record_free (rec);
    }
  else if ((pkt.protocol == IPPROTO_ICMP && pkt.icmp_type == 8)
           || (pkt.protocol == IPPROTO_ICMPV6 && pkt.icmp_type == 128))
    {
      AirlockSinkholeRecord *rec = sinkhole_record_new (sh, AIRLOCK_SINKHOLE_RECORD_ICMP,
                                                        pkt.family, pkt.dst, 0, 0);
      rec->bytes_in = pkt.payload_wire_len;
      sinkhole_write_record (sh, rec);
      airlock_sinkhole_record_free (rec);
    }
}

static gboolean on_tap (int fd, GIOCondition cond, gpointer user_data);

static gboolean
on_qemu (int fd, GIOCondition cond, gpointer user_data)
{
  Sinkhole *sh = user_data;
  ssize_t n = read (fd, sh->qemu_in + sh->qemu_in_len, sizeof sh->qemu_in - sh->qemu_in_len);

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  if (n <= 0)
    {
      /* QEMU is gone (the VM stopped): the run is over. */
      sinkhole_finish (sh);
      return G_SOURCE_REMOVE;
    }
  sh->qemu_in_len += (gsize) n;
  for (;;)
    {
      guint32 flen;

      if (sh->qemu_in_len < 4)
        break;
      flen = ((guint32) sh->qemu_in[0] << 24) | ((guint32) sh->qemu_in[1] << 16)
             | ((guint32) sh->qemu_in[2] << 8) | sh->qemu_in[3];
      if (flen > FRAME_MAX)
        {
          /* QEMU never sends one; the stream is not what we think it is. */
          g_printerr ("airlock-sinkhole: a frame of %u bytes from QEMU: closing\n", flen);
          sinkhole_finish (sh);
          return G_SOURCE_REMOVE;
        }
      if (sh->qemu_in_len < 4 + flen)
        break;
      sh->frames_in++;
      if (flen < 14 || memcmp (sh->qemu_in + 4 + 6, sh->guest_mac, 6) != 0)
        {
          /* Only the guest's NIC speaks on this side: a frame under any
           * other source MAC is forged (a workload writing frames past its
           * kernel).  Refused, so every frame in the capture that is not
           * from the guest's MAC is the network's (lib/net/housekeeping.c relies
           * on it), and counted in the final line. */
          if (sh->frames_refused++ == 0)
            sh->first_refused = flen < 14
              ? g_strdup_printf ("frame %" G_GUINT64_FORMAT " from the guest is %u bytes, "
                                 "shorter than an Ethernet header", sh->frames_in, flen)
              : g_strdup_printf ("frame %" G_GUINT64_FORMAT " from the guest has source MAC "
                                 "%02x:%02x:%02x:%02x:%02x:%02x, not its NIC's", sh->frames_in,
                                 sh->qemu_in[10], sh->qemu_in[11], sh->qemu_in[12],
                                 sh->qemu_in[13], sh->qemu_in[14], sh->qemu_in[15]);
        }
      else if (sinkhole_capture_frame (sh, sh->qemu_in + 4, flen))
        {
          note_guest_frame (sh, sh->qemu_in + 4, flen);
          /* A tap write never blocks for long: the kernel drops a frame
           * its queue cannot take, as a wire would. */
          if (write (sh->tap_fd, sh->qemu_in + 4, flen) < 0 && errno != EAGAIN)
            g_printerr ("airlock-sinkhole: tap write: %s\n", g_strerror (errno));
        }
      memmove (sh->qemu_in, sh->qemu_in + 4 + flen, sh->qemu_in_len - 4 - flen);
      sh->qemu_in_len -= 4 + flen;
    }
  return G_SOURCE_CONTINUE;
}

typedef struct {
  gint64 due_us;         /* g_get_monotonic_time () */
  GBytes *frame;         /* length prefix included */
} Delayed;

static gboolean
on_delay (gpointer user_data)
{
  Sinkhole *sh = user_data;
  Delayed *d;

  sh->delay_timer = 0;
  while ((d = g_queue_peek_head (&sh->delayed)) && d->due_us <= g_get_monotonic_time ())
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (d->frame, &len);

      g_queue_pop_head (&sh->delayed);
      if (sh->qemu_fd >= 0)
        sinkhole_write_all (sh->qemu_fd, data, len);
      g_bytes_unref (d->frame);
      g_free (d);
    }
  if (d)
    sh->delay_timer = g_timeout_add ((guint) ((d->due_us - g_get_monotonic_time ()) / 1000) + 1,
                                     on_delay, sh);
  return G_SOURCE_REMOVE;
}

static void
send_delayed (Sinkhole *sh, const guint8 *data, gsize len)
{
  Delayed *d = g_new (Delayed, 1);

  d->due_us = g_get_monotonic_time () + sh->delay_us;
  d->frame = g_bytes_new (data, len);
  g_queue_push_tail (&sh->delayed, d);
  if (!sh->delay_timer)
    sh->delay_timer = g_timeout_add ((guint) (sh->delay_us / 1000), on_delay, sh);
}

static gboolean
on_tap (int fd, GIOCondition cond, gpointer user_data)
{
  Sinkhole *sh = user_data;
  guint8 buf[4 + FRAME_MAX];
  ssize_t n = read (fd, buf + 4, FRAME_MAX);

  if (n < 0)
    return G_SOURCE_CONTINUE;
  /* After the final line (QEMU's end closed), a frame the namespace still
   * sends has no one to go to: neither captured nor passed on. */
  if (sh->qemu_fd < 0 || sh->finishing || !sinkhole_capture_frame (sh, buf + 4, (gsize) n))
    return G_SOURCE_CONTINUE;
  buf[0] = 0;
  buf[1] = 0;
  buf[2] = (guint8) (n >> 8);
  buf[3] = (guint8) n;
  /* QEMU reads its socket promptly; a bounded wait keeps a stuck QEMU
   * from stopping the records. */
  if (sh->delay_us > 0)
    send_delayed (sh, buf, 4 + (gsize) n);
  else
    sinkhole_write_all (sh->qemu_fd, buf, 4 + (gsize) n);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_listen (int fd, GIOCondition cond, gpointer user_data)
{
  Sinkhole *sh = user_data;

  sh->qemu_fd = accept4 (fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (sh->qemu_fd < 0)
    return G_SOURCE_CONTINUE;
  close (fd);
  g_unix_fd_add (sh->qemu_fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_qemu, sh);
  g_unix_fd_add (sh->tap_fd, G_IO_IN, on_tap, sh);
  return G_SOURCE_REMOVE;
}

void
sinkhole_relay_start (Sinkhole *sh)
{
  g_unix_fd_add (sh->listen_fd, G_IO_IN, on_listen, sh);
}

void
sinkhole_finish (Sinkhole *sh)
{
  if (sh->finishing)
    return;
  sh->finishing = TRUE;
  sinkhole_close_connections (sh);
  sinkhole_write_end (sh);
  g_main_loop_quit (sh->loop);
}
