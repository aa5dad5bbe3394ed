/* The airlock-sinkhole process's state and what its files share
 * (main.c says what the process is).  Data flows one way through them:
 * setup.c makes the namespace, the tap, the rules and the sockets;
 * relay.c passes frames between QEMU and the tap and notes what the
 * guest sent; listeners.c answers what the rules redirect (TCP, DNS);
 * evidence.c writes the capture and the records, which every other file
 * feeds; main.c reads the options and starts them in order. */
#pragma once

#include "sinkhole/sinkhole.h"

#include <glib.h>
#include <stdio.h>

#define TAP_NAME "airlock0"
/* The tap answers as QEMU's user network did: its gateway MAC, 10.0.2.2
 * and 10.0.2.3, fec0::2 and fec0::3 (lib/net/flows.h's AirlockCaptureGuest). */
extern const guint8 sinkhole_gateway_mac[6];   /* setup.c */

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
  /* The guest's NIC (lib/net/guest-net.h's AIRLOCK_NET_GUEST_MAC), parsed at
   * start. */
  guint8 guest_mac[6];

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

/* setup.c: the namespace and its sockets.  Each ends the process with the
 * reason (sinkhole_die) when it cannot do its part: before "ready", the
 * parent reports it. */
G_GNUC_PRINTF (1, 2) G_GNUC_NORETURN void sinkhole_die (const char *fmt, ...);
void sinkhole_enter_namespace (void);
int sinkhole_make_tap (void);
void sinkhole_load_rules (void);
int sinkhole_listen_on (int family, int type, guint16 port);
void sinkhole_forbid_new_sockets (void);

/* evidence.c: the capture and the records. */
gint64 sinkhole_now_us (Sinkhole *sh);
AirlockSinkholeRecord *sinkhole_record_new (Sinkhole *sh, AirlockSinkholeRecordKind kind,
                                            int family, const guint8 *address, guint16 port,
                                            guint16 client_port);
void sinkhole_write_record (Sinkhole *sh, AirlockSinkholeRecord *rec);
void sinkhole_capture_start (Sinkhole *sh);
gboolean sinkhole_capture_frame (Sinkhole *sh, const guint8 *frame, gsize len);
/* The final line, and both files synced. */
void sinkhole_write_end (Sinkhole *sh);

/* listeners.c: what the rules redirect, answered and recorded. */
gboolean sinkhole_write_all (int fd, const guint8 *data, gsize len);
void sinkhole_listeners_start (Sinkhole *sh);
/* Each open connection closed, and its record written. */
void sinkhole_close_connections (Sinkhole *sh);

/* relay.c: QEMU's stream ⇄ the tap. */
/* Waits for QEMU on sh->listen_fd, then relays until its end closes. */
void sinkhole_relay_start (Sinkhole *sh);
/* The run is over: connections closed, the final line written, the loop
 * quit.  Once. */
void sinkhole_finish (Sinkhole *sh);
