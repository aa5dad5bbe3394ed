/* airlock-sinkhole: the network airlock serves one guest (docs/sinkhole.md).
 *
 *   QEMU -netdev stream ──unix socket──► this process ──tap──► the kernel's
 *   TCP/IP stack, in a network namespace that holds only `lo` and the tap
 *
 * One process per run, started by lib/vm/sinkhole-proc.c.  It listens on
 * the unix socket QEMU's NIC connects to, then leaves the host's network
 * for a namespace of its own (unshare(CLONE_NEWNET); with a user namespace
 * when not root), where it makes the tap, gives it the addresses QEMU's
 * user network had (the guest's static configuration is unchanged), and
 * loads one nftables table that redirects every TCP connection and UDP
 * datagram arriving on the tap, to any address and port, IPv4 and IPv6, to
 * its own listeners, and lets the kernel answer ICMP echo.  A packet that
 * is not redirected has nowhere to go: the namespace has no other
 * interface, no route and no forwarding.  The TCP/IP is the kernel's; what
 * is written here is the relay, the listeners and the records.
 *
 * Once set up, the process can no longer make a socket or connect one: a
 * seccomp filter refuses socket(2), socketpair(2) and connect(2) (EPERM)
 * for the rest of its life, so even a bug in a parser of guest bytes cannot
 * open anything outward (tests/vm/host-safety.sh proves it from outside).
 *
 * Every frame either way is written to the capture (classic pcap) before
 * it is passed on; when the capture reaches its bound the relay stops
 * passing frames (the guest loses its network, the evidence loses
 * nothing).  Records (sinkhole.h) are written one per line as each
 * exchange ends, and a final line when QEMU's side closes.
 *
 * Exit status: 0 after the final line; 1 when setting up failed (the
 * reason on stderr, before "ready" is written to stdout). */
#define _GNU_SOURCE
#include "config.h"

#include "bounds-private.h"
#include "evidence/event.h"
#include "net/guest-net.h"
#include "net/net-private.h"
#include "sinkhole/sinkhole.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <net/if.h>
#include <netinet/in.h>
#include <nftables/libnftables.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/if_tun.h>
#include <linux/seccomp.h>

/* From linux/netfilter_ipv4.h and linux/netfilter_ipv6/ip6_tables.h,
 * which clash with glibc's <netinet/in.h>: the getsockopt that returns a
 * redirected connection's destination before the redirect. */
#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80
#endif
#define AIRLOCK_IP6T_SO_ORIGINAL_DST 80

/* linux/ipv6.h's struct in6_ifreq, which glibc's headers do not carry
 * (the guest's supervisor declares it the same way). */
struct airlock_in6_ifreq {
  struct in6_addr ifr6_addr;
  guint32 ifr6_prefixlen;
  int ifr6_ifindex;
};

#define TAP_NAME "airlock0"
/* The tap answers as QEMU's user network did: its gateway MAC, 10.0.2.2
 * and 10.0.2.3, fec0::2 and fec0::3 (lib/net/flows.h's AirlockCaptureGuest). */
static const guint8 gateway_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };
/* The guest's NIC (lib/net/guest-net.h's AIRLOCK_NET_GUEST_MAC), parsed at
 * start. */
static guint8 guest_mac[6];

/* Where the redirected traffic lands.  DNS keeps port 53; everything else
 * TCP goes to one listener and everything else UDP to one drain. */
#define PORT_DNS 53
#define PORT_TCP 9
#define PORT_UDP 9

/* A connection that sends nothing more for this long is judged on what it
 * sent (server-first protocols never send: they end here, empty). */
#define QUIET_MS 1500
/* After a fixture is sent, how long the client's further bytes are read. */
#define LINGER_MS 2000
/* Stream netdev frames: a 4-byte big-endian length, then the frame. */
#define FRAME_MAX 65535
/* Connections open at once; past it new ones are accepted and closed at
 * once (and recorded). */
#define CONNECTIONS_MAX 512

typedef struct {
  char *name;           /* lowercased, absolute */
  guint16 port;
  GBytes *bytes;
} Fixture;

typedef struct _Conn Conn;

typedef struct {
  GMainLoop *loop;
  AirlockSinkholeNames *names;
  GPtrArray *fixtures;   /* Fixture * */
  gint64 start_us;

  int listen_fd;         /* the unix socket QEMU connects to */
  int qemu_fd;
  int tap_fd;
  guint8 qemu_in[4 + FRAME_MAX];
  gsize qemu_in_len;

  int pcap_fd;
  guint64 pcap_bytes;
  gboolean pcap_full;
  gboolean pcap_failed;

  FILE *records;
  guint64 records_written;
  guint64 records_dropped;
  guint64 frames_in;         /* from QEMU, counted from 1 */
  guint64 frames_refused;
  char *first_refused;

  GHashTable *conns;     /* Conn * set */
  /* UDP/53 datagrams the relay saw from the guest: source port → the
   * destination it was sent to (the DNS listener only sees the redirect). */
  GHashTable *dns_dest;  /* GUINT_TO_POINTER(family<<16|port) → char * address text */
  gboolean finishing;

  /* $AIRLOCK_SINKHOLE_TEST_DELAY_MS: frames to the guest wait this long
   * first, in order — a slow host on demand, for the test of the warped
   * clock's network hold (tests/vm/clock.sh).  0: passed on at once. */
  gint64 delay_us;
  GQueue delayed;        /* GBytes * of whole stream frames, due in order */
  guint delay_timer;
} Sinkhole;

struct _Conn {
  Sinkhole *sh;
  int fd;
  guint watch;
  guint timer;
  gboolean dns;          /* the DNS-over-TCP listener's */
  gboolean lingering;    /* a fixture was sent; reading the rest */
  gboolean detect_done;
  AirlockSinkholeRecord *rec;
  GByteArray *in;        /* first client bytes, ≤ FIRST_BYTES_MAX */
  GByteArray *out;
  GByteArray *dns_buf;   /* DNS over TCP: unparsed stream */
  const Fixture *fixture;
};

static Sinkhole sh_global;

static G_GNUC_PRINTF (1, 2) void
die (const char *fmt, ...)
{
  va_list ap;

  fputs ("airlock-sinkhole: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

static gint64
now_us (Sinkhole *sh)
{
  return g_get_monotonic_time () - sh->start_us;
}

/* ---- records ------------------------------------------------------------ */

static void
write_record (Sinkhole *sh, AirlockSinkholeRecord *rec)
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

static AirlockSinkholeRecord *
record_new (Sinkhole *sh, AirlockSinkholeRecordKind kind, int family, const guint8 *address,
            guint16 port, guint16 client_port)
{
  AirlockSinkholeRecord *rec = g_new0 (AirlockSinkholeRecord, 1);
  char text[INET6_ADDRSTRLEN];

  rec->kind = kind;
  rec->time_us = rec->end_us = now_us (sh);
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

/* ---- the capture ---------------------------------------------------------- */

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

static void
pcap_header (Sinkhole *sh)
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
static gboolean
capture_frame (Sinkhole *sh, const guint8 *frame, gsize len)
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

/* ---- the relay ------------------------------------------------------------ */

/* What the guest sent that no listener sees as such: UDP datagrams (the
 * drain cannot learn their destination through the redirect) and ICMP echo
 * requests (the kernel answers them).  DNS datagrams' destinations are
 * remembered for the DNS listener's records. */
static void
note_guest_frame (Sinkhole *sh, const guint8 *frame, gsize len)
{
  NetPacket pkt;

  if (len < 14 || memcmp (frame + 6, gateway_mac, 6) == 0)
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
      AirlockSinkholeRecord *rec = record_new (sh, AIRLOCK_SINKHOLE_RECORD_UDP, pkt.family,
                                               pkt.dst, pkt.dst_port, pkt.src_port);

      g_bytes_unref (rec->client_bytes);
      rec->client_bytes = g_bytes_new (pkt.payload, MIN (pkt.payload_len,
                                                         AIRLOCK_SINKHOLE_DATAGRAM_BYTES_MAX));
      rec->bytes_in = pkt.payload_wire_len;
      write_record (sh, rec);
      airlock_sinkhole_record_free (rec);
    }
  else if ((pkt.protocol == IPPROTO_ICMP && pkt.icmp_type == 8)
           || (pkt.protocol == IPPROTO_ICMPV6 && pkt.icmp_type == 128))
    {
      AirlockSinkholeRecord *rec = record_new (sh, AIRLOCK_SINKHOLE_RECORD_ICMP, pkt.family,
                                               pkt.dst, 0, 0);
      rec->bytes_in = pkt.payload_wire_len;
      write_record (sh, rec);
      airlock_sinkhole_record_free (rec);
    }
}

static void finish (Sinkhole *sh);
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
      finish (sh);
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
          finish (sh);
          return G_SOURCE_REMOVE;
        }
      if (sh->qemu_in_len < 4 + flen)
        break;
      sh->frames_in++;
      if (flen < 14 || memcmp (sh->qemu_in + 4 + 6, guest_mac, 6) != 0)
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
      else if (capture_frame (sh, sh->qemu_in + 4, flen))
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

static gboolean
write_all (int fd, const guint8 *data, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd p = { .fd = fd, .events = POLLOUT };
          if (poll (&p, 1, 1000) <= 0)
            return FALSE;
          continue;
        }
      if (n <= 0)
        return FALSE;
      data += n;
      len -= (gsize) n;
    }
  return TRUE;
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
        write_all (sh->qemu_fd, data, len);
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
  if (sh->qemu_fd < 0 || sh->finishing || !capture_frame (sh, buf + 4, (gsize) n))
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
    write_all (sh->qemu_fd, buf, 4 + (gsize) n);
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

/* ---- TCP ---------------------------------------------------------------- */

static void
conn_close (Conn *c)
{
  Sinkhole *sh = c->sh;

  if (c->watch)
    g_source_remove (c->watch);
  if (c->timer)
    g_source_remove (c->timer);
  close (c->fd);
  if (!c->detect_done)
    {
      airlock_sinkhole_detected_clear (&c->rec->detected);
      airlock_sinkhole_detect (c->in->data, c->in->len, c->rec->port, TRUE, &c->rec->detected);
    }
  c->rec->end_us = now_us (sh);
  g_bytes_unref (c->rec->client_bytes);
  c->rec->client_bytes = g_bytes_new (c->in->data, c->in->len);
  g_bytes_unref (c->rec->server_bytes);
  c->rec->server_bytes = g_bytes_new (c->out->data, c->out->len);
  if (!c->rec->response)
    c->rec->response = g_strdup ("closed");
  write_record (sh, c->rec);
  airlock_sinkhole_record_free (c->rec);
  g_byte_array_unref (c->in);
  g_byte_array_unref (c->out);
  if (c->dns_buf)
    g_byte_array_unref (c->dns_buf);
  g_hash_table_remove (sh->conns, c);
  g_free (c);
}

static void
conn_send (Conn *c, const guint8 *data, gsize len)
{
  gsize keep = MIN (len, AIRLOCK_SINKHOLE_FIRST_BYTES_MAX - MIN (c->out->len,
                                                                  AIRLOCK_SINKHOLE_FIRST_BYTES_MAX));

  g_byte_array_append (c->out, data, (guint) keep);
  if (write_all (c->fd, data, len))
    c->rec->bytes_out += len;
}

static gboolean on_conn_quiet (gpointer user_data);

/* The client's first bytes are judged: send what a fixture says, or close.
 * FALSE when the connection was closed (@c is gone). */
static gboolean
conn_respond (Conn *c)
{
  const char *name = c->rec->name;

  if (!c->detect_done)
    {
      airlock_sinkhole_detected_clear (&c->rec->detected);
      airlock_sinkhole_detect (c->in->data, c->in->len, c->rec->port, TRUE, &c->rec->detected);
      c->detect_done = TRUE;
    }
  c->fixture = NULL;
  for (guint i = 0; name && i < c->sh->fixtures->len; i++)
    {
      const Fixture *f = g_ptr_array_index (c->sh->fixtures, i);
      if (f->port == c->rec->port && g_ascii_strcasecmp (f->name, name) == 0)
        c->fixture = f;
    }
  if (!c->fixture)
    {
      conn_close (c);
      return FALSE;
    }
  /* "fixture pypi.org:80": the name as a person writes it in --serve. */
  c->rec->response = g_strdup_printf ("fixture %.*s:%u", (int) strlen (c->fixture->name) - 1,
                                      c->fixture->name, c->fixture->port);
  {
    gsize len;
    const guint8 *data = g_bytes_get_data (c->fixture->bytes, &len);
    conn_send (c, data, len);
  }
  shutdown (c->fd, SHUT_WR);
  c->lingering = TRUE;
  if (c->timer)
    g_source_remove (c->timer);
  c->timer = g_timeout_add (LINGER_MS, on_conn_quiet, c);
  return TRUE;
}

static gboolean
on_conn_quiet (gpointer user_data)
{
  Conn *c = user_data;

  c->timer = 0;
  if (c->lingering)
    conn_close (c);
  else
    (void) conn_respond (c);
  return G_SOURCE_REMOVE;
}

/* DNS over TCP: answer every whole message in the stream. */
static void
conn_dns (Conn *c)
{
  while (c->dns_buf->len >= 2)
    {
      gsize mlen = ((gsize) c->dns_buf->data[0] << 8) | c->dns_buf->data[1];
      AirlockSinkholeRecord *rec;
      g_autoptr (GBytes) reply = NULL;

      if (c->dns_buf->len < 2 + mlen)
        return;
      rec = record_new (c->sh, AIRLOCK_SINKHOLE_RECORD_DNS, c->rec->family, c->rec->address,
                        c->rec->port, c->rec->client_port);
      rec->dns_transport = g_strdup ("tcp");
      g_ptr_array_unref (rec->dns.answers);
      rec->dns.answers = NULL;
      reply = airlock_sinkhole_dns_answer (c->sh->names, c->dns_buf->data + 2, mlen, &rec->dns);
      if (!rec->dns.answers)
        rec->dns.answers = g_ptr_array_new_with_free_func (g_free);
      write_record (c->sh, rec);
      airlock_sinkhole_record_free (rec);
      if (reply)
        {
          gsize rlen;
          const guint8 *rdata = g_bytes_get_data (reply, &rlen);
          guint8 prefix[2] = { (guint8) (rlen >> 8), (guint8) rlen };
          conn_send (c, prefix, 2);
          conn_send (c, rdata, rlen);
        }
      g_byte_array_remove_range (c->dns_buf, 0, (guint) (2 + mlen));
    }
}

static gboolean
on_conn (int fd, GIOCondition cond, gpointer user_data)
{
  Conn *c = user_data;
  guint8 buf[4096];
  ssize_t n = read (fd, buf, sizeof buf);

  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  if (n <= 0)
    {
      c->watch = 0;
      conn_close (c);
      return G_SOURCE_REMOVE;
    }
  c->rec->bytes_in += (guint64) n;
  if (c->in->len < AIRLOCK_SINKHOLE_FIRST_BYTES_MAX)
    g_byte_array_append (c->in, buf,
                         (guint) MIN ((gsize) n, AIRLOCK_SINKHOLE_FIRST_BYTES_MAX - c->in->len));
  if (c->lingering)
    return G_SOURCE_CONTINUE;
  if (c->dns)
    {
      if (c->dns_buf->len < AIRLOCK_DNS_TCP_MESSAGE_MAX * 2)
        g_byte_array_append (c->dns_buf, buf, (guint) n);
      conn_dns (c);
    }
  if (c->timer)
    g_source_remove (c->timer);
  c->timer = 0;
  if (!c->dns)
    {
      AirlockSinkholeDetectResult r;
      gboolean full = c->in->len >= AIRLOCK_SINKHOLE_FIRST_BYTES_MAX;

      airlock_sinkhole_detected_clear (&c->rec->detected);
      r = airlock_sinkhole_detect (c->in->data, c->in->len, c->rec->port, full,
                                   &c->rec->detected);
      if (r == AIRLOCK_SINKHOLE_DETECT_DONE)
        {
          guint watch = c->watch;

          c->detect_done = TRUE;
          /* This source is the one dispatching: conn_close must not
           * remove it. */
          c->watch = 0;
          if (!conn_respond (c))
            return G_SOURCE_REMOVE;
          /* The fixture is sent: the client's further bytes and its end
           * are still read while the connection lingers, so they are in
           * its record, and a client that closes ends it (and has it
           * written) then, not LINGER_MS later. */
          c->watch = watch;
          return G_SOURCE_CONTINUE;
        }
    }
  c->timer = g_timeout_add (QUIET_MS, on_conn_quiet, c);
  return G_SOURCE_CONTINUE;
}

static gboolean
original_destination (int fd, int family, guint8 *addr, guint16 *port)
{
  if (family == AF_INET)
    {
      struct sockaddr_in sin;
      socklen_t len = sizeof sin;

      if (getsockopt (fd, SOL_IP, SO_ORIGINAL_DST, &sin, &len) < 0)
        return FALSE;
      memcpy (addr, &sin.sin_addr, 4);
      *port = ntohs (sin.sin_port);
    }
  else
    {
      struct sockaddr_in6 sin6;
      socklen_t len = sizeof sin6;

      if (getsockopt (fd, SOL_IPV6, AIRLOCK_IP6T_SO_ORIGINAL_DST, &sin6, &len) < 0)
        return FALSE;
      memcpy (addr, &sin6.sin6_addr, 16);
      *port = ntohs (sin6.sin6_port);
    }
  return TRUE;
}

static gboolean
on_accept (int lfd, GIOCondition cond, gpointer user_data)
{
  Sinkhole *sh = &sh_global;
  gboolean dns = GPOINTER_TO_INT (user_data);
  struct sockaddr_storage peer;
  socklen_t plen = sizeof peer;
  int fd = accept4 (lfd, (struct sockaddr *) &peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
  guint8 dst[16] = { 0 };
  guint16 dport = 0, cport;
  Conn *c;

  if (fd < 0)
    return G_SOURCE_CONTINUE;
  if (!original_destination (fd, peer.ss_family, dst, &dport))
    {
      /* Not redirected: the guest connected to the listener's own address
       * and port.  getsockname is then the destination. */
      struct sockaddr_storage self;
      socklen_t slen = sizeof self;

      getsockname (fd, (struct sockaddr *) &self, &slen);
      if (self.ss_family == AF_INET)
        {
          memcpy (dst, &((struct sockaddr_in *) &self)->sin_addr, 4);
          dport = ntohs (((struct sockaddr_in *) &self)->sin_port);
        }
      else
        {
          memcpy (dst, &((struct sockaddr_in6 *) &self)->sin6_addr, 16);
          dport = ntohs (((struct sockaddr_in6 *) &self)->sin6_port);
        }
    }
  cport = peer.ss_family == AF_INET ? ntohs (((struct sockaddr_in *) &peer)->sin_port)
                                    : ntohs (((struct sockaddr_in6 *) &peer)->sin6_port);
  c = g_new0 (Conn, 1);
  c->sh = sh;
  c->fd = fd;
  c->dns = dns;
  c->rec = record_new (sh, AIRLOCK_SINKHOLE_RECORD_TCP, peer.ss_family, dst, dport, cport);
  c->rec->name = g_strdup (airlock_sinkhole_names_reverse (sh->names, peer.ss_family, dst));
  c->in = g_byte_array_new ();
  c->out = g_byte_array_new ();
  if (dns)
    c->dns_buf = g_byte_array_new ();
  g_hash_table_add (sh->conns, c);
  if (g_hash_table_size (sh->conns) > CONNECTIONS_MAX)
    {
      c->rec->response = g_strdup ("closed: too many connections at once");
      conn_close (c);
      return G_SOURCE_CONTINUE;
    }
  c->watch = g_unix_fd_add (fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_conn, c);
  c->timer = g_timeout_add (QUIET_MS, on_conn_quiet, c);
  return G_SOURCE_CONTINUE;
}

/* ---- DNS over UDP --------------------------------------------------------- */

static gboolean
on_dns_udp (int fd, GIOCondition cond, gpointer user_data)
{
  Sinkhole *sh = &sh_global;
  guint8 buf[FRAME_MAX];
  struct sockaddr_storage peer;
  socklen_t plen = sizeof peer;
  ssize_t n = recvfrom (fd, buf, sizeof buf, 0, (struct sockaddr *) &peer, &plen);
  AirlockSinkholeRecord *rec;
  g_autoptr (GBytes) reply = NULL;
  guint8 dst[16] = { 0 };
  guint16 cport;
  const char *sent_to;

  if (n < 0)
    return G_SOURCE_CONTINUE;
  cport = peer.ss_family == AF_INET ? ntohs (((struct sockaddr_in *) &peer)->sin_port)
                                    : ntohs (((struct sockaddr_in6 *) &peer)->sin6_port);
  /* The relay saw where the guest sent it. */
  sent_to = g_hash_table_lookup (sh->dns_dest,
                                 GUINT_TO_POINTER (((guint) peer.ss_family << 16) | cport));
  if (!sent_to || inet_pton (peer.ss_family, sent_to, dst) != 1)
    memset (dst, 0, sizeof dst);
  rec = record_new (sh, AIRLOCK_SINKHOLE_RECORD_DNS, peer.ss_family, dst, PORT_DNS, cport);
  rec->dns_transport = g_strdup ("udp");
  g_ptr_array_unref (rec->dns.answers);
  rec->dns.answers = NULL;
  reply = airlock_sinkhole_dns_answer (sh->names, buf, (gsize) n, &rec->dns);
  if (!rec->dns.answers)
    rec->dns.answers = g_ptr_array_new_with_free_func (g_free);
  rec->bytes_in = (guint64) n;
  g_bytes_unref (rec->client_bytes);
  rec->client_bytes = g_bytes_new (buf, MIN ((gsize) n, AIRLOCK_SINKHOLE_DATAGRAM_BYTES_MAX));
  if (reply)
    {
      gsize rlen;
      const guint8 *rdata = g_bytes_get_data (reply, &rlen);

      if (sendto (fd, rdata, rlen, 0, (struct sockaddr *) &peer, plen) >= 0)
        rec->bytes_out = rlen;
      g_bytes_unref (rec->server_bytes);
      rec->server_bytes = g_bytes_ref (reply);
    }
  write_record (sh, rec);
  airlock_sinkhole_record_free (rec);
  return G_SOURCE_CONTINUE;
}

static gboolean
on_udp_drain (int fd, GIOCondition cond, gpointer user_data)
{
  guint8 buf[FRAME_MAX];

  /* Recorded from the frame by the relay (note_guest_frame). */
  (void) recv (fd, buf, sizeof buf, 0);
  return G_SOURCE_CONTINUE;
}

/* ---- the end ---------------------------------------------------------------- */

static void
finish (Sinkhole *sh)
{
  g_autofree char *end = NULL;
  GList *conns;

  if (sh->finishing)
    return;
  sh->finishing = TRUE;
  conns = g_hash_table_get_keys (sh->conns);
  for (GList *l = conns; l; l = l->next)
    conn_close (l->data);
  g_list_free (conns);
  end = airlock_sinkhole_end_line_to_json (sh->records_dropped, sh->frames_refused,
                                           sh->first_refused);
  fprintf (sh->records, "%s\n", end);
  if (fflush (sh->records) != 0 || fsync (fileno (sh->records)) != 0)
    g_printerr ("airlock-sinkhole: cannot write the records: %s\n", g_strerror (errno));
  if (sh->pcap_failed)
    g_printerr ("airlock-sinkhole: the capture could not be written whole\n");
  if (fsync (sh->pcap_fd) != 0)
    g_printerr ("airlock-sinkhole: cannot write the capture: %s\n", g_strerror (errno));
  g_main_loop_quit (sh->loop);
}

static gboolean
on_signal (gpointer user_data)
{
  finish (user_data);
  return G_SOURCE_REMOVE;
}

static gboolean
on_parent (int fd, GIOCondition cond, gpointer user_data)
{
  char buf[64];

  if (read (fd, buf, sizeof buf) > 0)
    return G_SOURCE_CONTINUE;
  finish (user_data);
  return G_SOURCE_REMOVE;
}

/* ---- setting up ------------------------------------------------------------ */

static void
write_proc (const char *path, const char *text, gboolean required)
{
  g_autoptr (GError) error = NULL;

  if (!g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_NONE, 0644, &error)
      && required)
    die ("cannot write '%s': %s", path, error->message);
}

/* Into a network namespace of our own: as root, a new one; otherwise
 * inside a new user namespace that maps us to its root, which is what
 * gives the capability to make a tap and load nftables there (and
 * nothing on the host). */
static void
enter_namespace (void)
{
  uid_t uid = geteuid ();
  gid_t gid = getegid ();

  if (uid == 0)
    {
      if (unshare (CLONE_NEWNET) < 0)
        die ("cannot make a network namespace: %s", g_strerror (errno));
      return;
    }
  if (unshare (CLONE_NEWUSER | CLONE_NEWNET) < 0)
    die ("cannot make a user and network namespace (as uid %u): %s; the kernel may forbid "
         "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone)",
         (unsigned) uid, g_strerror (errno));
  {
    g_autofree char *umap = g_strdup_printf ("0 %u 1\n", (unsigned) uid);
    g_autofree char *gmap = g_strdup_printf ("0 %u 1\n", (unsigned) gid);
    write_proc ("/proc/self/setgroups", "deny", TRUE);
    write_proc ("/proc/self/uid_map", umap, TRUE);
    write_proc ("/proc/self/gid_map", gmap, TRUE);
  }
}

static void
ifreq_call (int s, unsigned long req, struct ifreq *ifr, const char *what)
{
  if (ioctl (s, req, ifr) < 0)
    die ("cannot %s on '%s': %s", what, ifr->ifr_name, g_strerror (errno));
}

static void
set_v4 (int s, const char *ifname, const char *addr)
{
  struct ifreq ifr = { 0 };
  struct sockaddr_in *sin = (struct sockaddr_in *) &ifr.ifr_addr;

  g_strlcpy (ifr.ifr_name, ifname, IFNAMSIZ);
  sin->sin_family = AF_INET;
  inet_pton (AF_INET, addr, &sin->sin_addr);
  ifreq_call (s, SIOCSIFADDR, &ifr, "set an IPv4 address");
  inet_pton (AF_INET, "255.255.255.0", &sin->sin_addr);
  ifreq_call (s, SIOCSIFNETMASK, &ifr, "set an IPv4 netmask");
}

static void
set_v6 (int s6, int ifindex, const char *addr)
{
  struct airlock_in6_ifreq r = { .ifr6_prefixlen = 64, .ifr6_ifindex = ifindex };

  inet_pton (AF_INET6, addr, &r.ifr6_addr);
  if (ioctl (s6, SIOCSIFADDR, &r) < 0)
    die ("cannot set %s on '" TAP_NAME "': %s", addr, g_strerror (errno));
}

static int
make_tap (void)
{
  struct ifreq ifr = { 0 };
  int fd = open ("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  int s, s6;

  if (fd < 0)
    die ("cannot open /dev/net/tun: %s", g_strerror (errno));
  g_strlcpy (ifr.ifr_name, TAP_NAME, IFNAMSIZ);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  if (ioctl (fd, TUNSETIFF, &ifr) < 0)
    die ("cannot make the tap device: %s", g_strerror (errno));

  /* Before the link is up: no router solicitations, no autoconfiguration,
   * no duplicate address detection (the guest has its addresses
   * statically; nothing here should speak first). */
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/accept_ra", "0", FALSE);
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/autoconf", "0", FALSE);
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/router_solicitations", "0", FALSE);
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/dad_transmits", "0", FALSE);
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/accept_dad", "0", FALSE);

  s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  s6 = socket (AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0 || s6 < 0)
    die ("cannot make a socket to configure the namespace: %s", g_strerror (errno));

  memset (&ifr, 0, sizeof ifr);
  g_strlcpy (ifr.ifr_name, "lo", IFNAMSIZ);
  ifr.ifr_flags = IFF_UP | IFF_RUNNING;
  ifreq_call (s, SIOCSIFFLAGS, &ifr, "bring up");

  memset (&ifr, 0, sizeof ifr);
  g_strlcpy (ifr.ifr_name, TAP_NAME, IFNAMSIZ);
  ifr.ifr_hwaddr.sa_family = 1; /* ARPHRD_ETHER */
  memcpy (ifr.ifr_hwaddr.sa_data, gateway_mac, 6);
  ifreq_call (s, SIOCSIFHWADDR, &ifr, "set the MAC address");
  set_v4 (s, TAP_NAME, "10.0.2.2");
  set_v4 (s, TAP_NAME ":1", "10.0.2.3");
  memset (&ifr, 0, sizeof ifr);
  g_strlcpy (ifr.ifr_name, TAP_NAME, IFNAMSIZ);
  ifr.ifr_flags = IFF_UP | IFF_RUNNING;
  ifreq_call (s, SIOCSIFFLAGS, &ifr, "bring up");
  ifreq_call (s, SIOCGIFINDEX, &ifr, "find the index");
  set_v6 (s6, ifr.ifr_ifindex, "fec0::2");
  set_v6 (s6, ifr.ifr_ifindex, "fec0::3");
  close (s);
  close (s6);
  return fd;
}

/* The one table.  prerouting: everything from the tap to our listeners
 * (DNS keeps its port); ICMP echo to the tap's own address, which the
 * kernel answers.  output: the namespace sends only replies to the guest
 * and neighbour discovery; it never starts a connection (there is nowhere
 * to start one to, and this says so twice).  Loaded through libnftables. */
static const char nft_rules[] =
  "table inet airlock {\n"
  "  chain prerouting {\n"
  "    type nat hook prerouting priority dstnat; policy accept;\n"
  "    iifname != \"" TAP_NAME "\" return\n"
  "    meta l4proto { tcp, udp } th dport 53 redirect to :53\n"
  "    meta l4proto tcp redirect to :9\n"
  "    meta l4proto udp redirect to :9\n"
  "    icmp type echo-request redirect\n"
  "    icmpv6 type echo-request redirect\n"
  "  }\n"
  "  chain input {\n"
  "    type filter hook input priority filter; policy drop;\n"
  "    iifname \"lo\" accept\n"
  "    ct state established,related accept\n"
  "    meta l4proto { tcp, udp } th dport { 9, 53 } accept\n"
  "    icmp type echo-request accept\n"
  "    icmpv6 type { echo-request, nd-neighbor-solicit, nd-neighbor-advert } accept\n"
  "  }\n"
  "  chain output {\n"
  "    type filter hook output priority filter; policy drop;\n"
  "    oifname \"lo\" accept\n"
  "    ct state established,related accept\n"
  "    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept\n"
  "  }\n"
  "}\n";

static void
load_rules (void)
{
  struct nft_ctx *nft = nft_ctx_new (NFT_CTX_DEFAULT);

  if (!nft)
    die ("cannot start libnftables");
  nft_ctx_buffer_error (nft);
  if (nft_run_cmd_from_buffer (nft, nft_rules) != 0)
    die ("cannot load the network's nftables rules: %s", nft_ctx_get_error_buffer (nft));
  nft_ctx_free (nft);
}

static int
listen_on (int family, int type, guint16 port)
{
  int fd = socket (family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  struct sockaddr_storage ss = { 0 };
  socklen_t len;

  if (fd < 0)
    die ("cannot make a listener: %s", g_strerror (errno));
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6)
    {
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) &ss;
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
      s6->sin6_family = AF_INET6;
      s6->sin6_port = htons (port);
      len = sizeof *s6;
    }
  else
    {
      struct sockaddr_in *s4 = (struct sockaddr_in *) &ss;
      s4->sin_family = AF_INET;
      s4->sin_port = htons (port);
      len = sizeof *s4;
    }
  if (bind (fd, (struct sockaddr *) &ss, len) < 0)
    die ("cannot bind port %u: %s", port, g_strerror (errno));
  if (type == SOCK_STREAM && listen (fd, 128) < 0)
    die ("cannot listen on port %u: %s", port, g_strerror (errno));
  return fd;
}

/* From here on no socket is made or connected: the listeners, the tap and
 * QEMU's socket are all there is.  A hand-written filter (three system
 * calls, one action) rather than libseccomp: the guest's supervisor
 * already writes its filters this way. */
static void
forbid_new_sockets (void)
{
#if defined(__x86_64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_AARCH64
#endif
#ifdef AUDIT_ARCH_SELF
  struct sock_filter filter[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_SELF, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 3, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 2, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog prog = { .len = G_N_ELEMENTS (filter), .filter = filter };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
    die ("cannot forbid new sockets: %s", g_strerror (errno));
#else
#error "airlock-sinkhole: name this architecture's AUDIT_ARCH"
#endif
}

static gboolean
add_fixture (Sinkhole *sh, const char *spec, GError **error)
{
  const char *eq = strchr (spec, '=');
  const char *colon;
  g_autofree char *host = NULL;
  guint64 port;
  g_autoptr (GMappedFile) file = NULL;
  Fixture *f;

  if (!eq || !(colon = memchr (spec, ':', (gsize) (eq - spec))) || colon == spec)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--serve '%s': expected NAME:PORT=FILE", spec);
      return FALSE;
    }
  host = g_ascii_strdown (spec, colon - spec);
  {
    g_autofree char *p = g_strndup (colon + 1, (gsize) (eq - colon - 1));
    if (!g_ascii_string_to_unsigned (p, 10, 1, 65535, &port, NULL))
      {
        g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     "--serve '%s': '%s' is not a port (1-65535)", spec, p);
        return FALSE;
      }
  }
  file = g_mapped_file_new (eq + 1, FALSE, error);
  if (!file)
    return FALSE;
  f = g_new0 (Fixture, 1);
  f->name = g_str_has_suffix (host, ".") ? g_steal_pointer (&host) : g_strconcat (host, ".", NULL);
  f->port = (guint16) port;
  f->bytes = g_mapped_file_get_bytes (file);
  g_ptr_array_add (sh->fixtures, f);
  return TRUE;
}

int
main (int argc, char **argv)
{
  Sinkhole *sh = &sh_global;
  g_autofree char *socket_path = NULL;
  g_autofree char *pcap_path = NULL;
  g_autofree char *records_path = NULL;
  g_autofree char *socket_owner = NULL;
  g_auto (GStrv) serve = NULL;
  GOptionEntry entries[] = {
    { "socket", 0, 0, G_OPTION_ARG_FILENAME, &socket_path, "Unix socket QEMU's NIC connects to", "PATH" },
    { "socket-owner", 0, 0, G_OPTION_ARG_STRING, &socket_owner, "Give the socket to QEMU's user", "UID:GID" },
    { "pcap", 0, 0, G_OPTION_ARG_FILENAME, &pcap_path, "Capture file to write", "PATH" },
    { "records", 0, 0, G_OPTION_ARG_FILENAME, &records_path, "Record file to write", "PATH" },
    { "serve", 0, 0, G_OPTION_ARG_STRING_ARRAY, &serve, "What NAME answers on PORT", "NAME:PORT=FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- the network airlock serves one guest");
  g_autoptr (GError) error = NULL;
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  int fd;

  /* Every peer may go at any time: QEMU's end of the socket when the VM
   * stops (with a frame from the namespace still on its way), a guest's
   * connection reset under a fixture being sent.  Each is a write that
   * fails with EPIPE, handled where it happens; SIGPIPE's default would
   * kill the process instead, and lib/vm/sinkhole-proc.c takes the records
   * of an exit with status 0 only: the run would lose them. */
  signal (SIGPIPE, SIG_IGN);
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    die ("%s", error->message);
  if (!socket_path || !pcap_path || !records_path)
    die ("--socket, --pcap and --records are required");

  {
    guint m[6];
    if (sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
                &m[5]) != 6)
      die ("cannot read the guest's MAC '%s'", AIRLOCK_NET_GUEST_MAC);
    for (int i = 0; i < 6; i++)
      guest_mac[i] = (guint8) m[i];
  }
  sh->start_us = g_get_monotonic_time ();
  sh->names = airlock_sinkhole_names_new ();
  sh->fixtures = g_ptr_array_new ();
  sh->conns = g_hash_table_new (NULL, NULL);
  sh->dns_dest = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  sh->qemu_fd = -1;
  g_queue_init (&sh->delayed);
  {
    const char *delay = g_getenv ("AIRLOCK_SINKHOLE_TEST_DELAY_MS");
    guint64 ms = 0;

    if (delay && (!g_ascii_string_to_unsigned (delay, 10, 0, 10000, &ms, NULL)))
      die ("AIRLOCK_SINKHOLE_TEST_DELAY_MS='%s' is not a number of milliseconds up to 10000", delay);
    sh->delay_us = (gint64) ms * 1000;
  }
  for (guint i = 0; serve && serve[i]; i++)
    if (!add_fixture (sh, serve[i], &error))
      die ("%s", error->message);

  /* Files first, on the host's side of everything. */
  sh->pcap_fd = open (pcap_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (sh->pcap_fd < 0)
    die ("cannot create the capture '%s': %s", pcap_path, g_strerror (errno));
  fd = open (records_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || !(sh->records = fdopen (fd, "w")))
    die ("cannot create the record file '%s': %s", records_path, g_strerror (errno));
  pcap_header (sh);

  /* QEMU's socket: a filesystem path, reachable from the host's side
   * whatever namespace we are in. */
  if (strlen (socket_path) >= sizeof sun.sun_path)
    die ("socket path '%s' is too long for a unix socket", socket_path);
  strcpy (sun.sun_path, socket_path);
  sh->listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sh->listen_fd < 0 || bind (sh->listen_fd, (struct sockaddr *) &sun, sizeof sun) < 0
      || listen (sh->listen_fd, 1) < 0)
    die ("cannot listen on '%s': %s", socket_path, g_strerror (errno));
  if (chmod (socket_path, 0600) < 0)
    die ("cannot chmod '%s': %s", socket_path, g_strerror (errno));
  if (socket_owner)
    {
      unsigned uid, gid;
      if (sscanf (socket_owner, "%u:%u", &uid, &gid) != 2 || chown (socket_path, uid, gid) < 0)
        die ("cannot give '%s' to %s: %s", socket_path, socket_owner, g_strerror (errno));
    }

  enter_namespace ();
  sh->tap_fd = make_tap ();
  load_rules ();
  {
    int l[] = {
      listen_on (AF_INET, SOCK_STREAM, PORT_TCP), listen_on (AF_INET6, SOCK_STREAM, PORT_TCP),
      listen_on (AF_INET, SOCK_STREAM, PORT_DNS), listen_on (AF_INET6, SOCK_STREAM, PORT_DNS),
      listen_on (AF_INET, SOCK_DGRAM, PORT_DNS), listen_on (AF_INET6, SOCK_DGRAM, PORT_DNS),
      listen_on (AF_INET, SOCK_DGRAM, PORT_UDP), listen_on (AF_INET6, SOCK_DGRAM, PORT_UDP),
    };
    g_unix_fd_add (l[0], G_IO_IN, on_accept, GINT_TO_POINTER (FALSE));
    g_unix_fd_add (l[1], G_IO_IN, on_accept, GINT_TO_POINTER (FALSE));
    g_unix_fd_add (l[2], G_IO_IN, on_accept, GINT_TO_POINTER (TRUE));
    g_unix_fd_add (l[3], G_IO_IN, on_accept, GINT_TO_POINTER (TRUE));
    g_unix_fd_add (l[4], G_IO_IN, on_dns_udp, NULL);
    g_unix_fd_add (l[5], G_IO_IN, on_dns_udp, NULL);
    g_unix_fd_add (l[6], G_IO_IN, on_udp_drain, NULL);
    g_unix_fd_add (l[7], G_IO_IN, on_udp_drain, NULL);
  }
  /* GLib's main context makes its wakeup (an eventfd) on first use:
   * make it now, before sockets are forbidden. */
  sh->loop = g_main_loop_new (NULL, FALSE);
  g_unix_signal_add (SIGTERM, on_signal, sh);
  /* Our stdin is a pipe the parent holds open: its end (the parent died)
   * ends us as QEMU's end does.  Not PR_SET_PDEATHSIG: that follows the
   * thread that started us, which may end long before the run. */
  g_unix_fd_add (0, G_IO_IN | G_IO_HUP | G_IO_ERR, on_parent, sh);
  g_unix_signal_add (SIGINT, on_signal, sh);
  forbid_new_sockets ();

  fputs ("ready\n", stdout);
  fflush (stdout);

  /* One client: QEMU.  The parent stops us by pid (SIGTERM: the records
   * still end with their final line) when the domain does not start. */
  g_unix_fd_add (sh->listen_fd, G_IO_IN, on_listen, sh);
  g_main_loop_run (sh->loop);
  return 0;
}
