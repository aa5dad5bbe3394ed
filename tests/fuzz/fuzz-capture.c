/* libFuzzer harness for the capture analysis (lib/net/).
 *
 * The input is used three ways: as a pcap file as it is (the reader's
 * checks), as a list of frames (fuzz-capture.h) written into a
 * well-formed pcap, and as a first TCP payload given to the TLS and HTTP
 * parsers whole and cut at a point drawn from a hash of the input.
 *
 * Besides the sanitizers' findings, it aborts when an invariant breaks:
 *   - a pcap the harness wrote always analyses; a file that fails has an
 *     error message, one that succeeds counts every record;
 *   - every frame from the guest is in a flow, in housekeeping or in an
 *     anomaly it sent, and flows plus housekeeping count no more frames
 *     than the guest sent;
 *   - each flow's key is airlock_capture_flow_key() of its fields and finds
 *     it, keys are unique, the address text is the address, counters are
 *     consistent (SYNs and datagrams never exceed packets), names are
 *     distinct, printable and at most AIRLOCK_CAPTURE_NAMES_MAX;
 *   - anomaly reasons are printable, and count what the guest sent;
 *   - the payload parsers are monotonic: a name found in a prefix is the
 *     name found in the whole, a prefix that is not TLS or HTTP does not
 *     become it. */
#include "config.h"

#include "net/flows.h"
#include "net/net-private.h"
#include "net/pcap.h"
#include "fuzz-capture.h"
#include "fuzz-util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const guint8 guest_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static void
put_le32 (GByteArray *b, guint32 v)
{
  guint8 p[4] = { (guint8) v, (guint8) (v >> 8), (guint8) (v >> 16), (guint8) (v >> 24) };

  g_byte_array_append (b, p, 4);
}

static void
check_names (GPtrArray *names)
{
  fuzz_check (names->len <= AIRLOCK_CAPTURE_NAMES_MAX);
  for (guint i = 0; i < names->len; i++)
    {
      fuzz_check_safe_text (names->pdata[i]);
      for (guint j = 0; j < i; j++)
        fuzz_check (strcmp (names->pdata[i], names->pdata[j]) != 0);
    }
}

/* @guest_mac_frames: frames from the guest's MAC, or G_MAXUINT64 when not
 * known. */
static void
check_capture (AirlockCapture *capture, guint64 records, guint64 guest_mac_frames)
{
  GPtrArray *flows = airlock_capture_get_flows (capture);
  GPtrArray *housekeeping = airlock_capture_get_housekeeping (capture);
  GPtrArray *anomalies = airlock_capture_get_anomalies (capture);
  g_autoptr (GHashTable) keys = g_hash_table_new (g_str_hash, g_str_equal);
  guint64 in_flows = 0, in_housekeeping = 0, in_anomalies = 0, forged = 0, guest_frames;

  fuzz_check (airlock_capture_get_frames (capture) == records);
  /* every frame that is neither from the guest's MAC nor QEMU's own is the
   * guest's under a forged source, and a FOREIGN_MAC anomaly */
  for (guint i = 0; i < anomalies->len; i++)
    if (((AirlockCaptureAnomaly *) anomalies->pdata[i])->kind == AIRLOCK_CAPTURE_ANOMALY_FOREIGN_MAC)
      forged = ((AirlockCaptureAnomaly *) anomalies->pdata[i])->count;
  if (guest_mac_frames != G_MAXUINT64)
    fuzz_check (airlock_capture_get_guest_frames (capture) == guest_mac_frames + forged);
  guest_frames = airlock_capture_get_guest_frames (capture);
  fuzz_check (flows->len <= AIRLOCK_CAPTURE_FLOWS_MAX);

  for (guint i = 0; i < flows->len; i++)
    {
      const AirlockFlow *flow = flows->pdata[i];
      g_autofree char *key = airlock_capture_flow_key (flow->family, flow->protocol,
                                                       flow->address, flow->port);
      char text[INET6_ADDRSTRLEN];

      fuzz_check (flow->family == AF_INET || flow->family == AF_INET6);
      fuzz_check (strcmp (key, flow->key) == 0);
      fuzz_check_safe_text (flow->key);
      fuzz_check (airlock_capture_lookup_flow (capture, flow->key) == flow);
      fuzz_check (g_hash_table_add (keys, flow->key));
      fuzz_check (inet_ntop (flow->family, flow->address, text, sizeof text) != NULL);
      fuzz_check (strcmp (text, flow->address_text) == 0);
      fuzz_check (flow->packets >= 1);
      fuzz_check (flow->syns <= flow->packets && flow->datagrams <= flow->packets);
      fuzz_check (flow->echo_requests <= flow->packets);
      fuzz_check (flow->fragments <= flow->packets && flow->malformed <= flow->packets);
      fuzz_check (flow->first_record < records);
      if (flow->protocol != IPPROTO_TCP && flow->protocol != IPPROTO_UDP)
        fuzz_check (flow->port == 0);
      if (flow->protocol != IPPROTO_TCP)
        fuzz_check (flow->syns == 0 && flow->sni->len == 0 && flow->http_hosts->len == 0
                    && !flow->rst_seen);
      if (flow->port != 53)
        fuzz_check (flow->dns_names->len == 0);
      check_names (flow->dns_names);
      check_names (flow->sni);
      check_names (flow->http_hosts);
      in_flows += flow->packets;
    }
  for (guint i = 0; i < housekeeping->len; i++)
    {
      const AirlockHousekeeping *h = housekeeping->pdata[i];

      fuzz_check (h->count + h->replies > 0);
      fuzz_check (strcmp (airlock_housekeeping_kind_to_string (h->kind), "invalid") != 0);
      fuzz_check (i == 0 || h->kind > ((AirlockHousekeeping *) housekeeping->pdata[i - 1])->kind);
      in_housekeeping += h->count;
    }
  for (guint i = 0; i < anomalies->len; i++)
    {
      const AirlockCaptureAnomaly *a = anomalies->pdata[i];

      fuzz_check (a->count > 0 && a->from_guest <= a->count);
      fuzz_check (a->first_record < records);
      fuzz_check (a->first_frame == a->first_record + 1);
      fuzz_check (airlock_capture_get_first_anomaly (capture)->first_record <= a->first_record);
      fuzz_check_safe_text (a->first_reason);
      fuzz_check (strcmp (airlock_capture_anomaly_kind_to_string (a->kind), "invalid") != 0);
      /* a forged MAC says who sent the frame, not where it went */
      if (a->kind != AIRLOCK_CAPTURE_ANOMALY_FOREIGN_MAC)
        in_anomalies += a->from_guest;
    }
  fuzz_check ((anomalies->len == 0) == (airlock_capture_get_first_anomaly (capture) == NULL));
  /* a fragment whose head was missed is both a flow packet and an
   * anomaly, so only the lower bound is exact */
  fuzz_check (in_flows + in_housekeeping <= guest_frames);
  fuzz_check (guest_frames <= in_flows + in_housekeeping + in_anomalies);
}

/* The input as frames (fuzz-capture.h), into a pcap the harness writes. */
static void
run_frames (const guint8 *data, gsize size)
{
  g_autoptr (GByteArray) pcap = g_byte_array_new ();
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (AirlockCapture) capture = NULL;
  g_autoptr (GError) error = NULL;
  AirlockCaptureGuest guest;
  guint64 records = 0, guest_frames = 0;
  gsize pos = 0;

  put_le32 (pcap, 0xa1b2c3d4);
  put_le32 (pcap, 0x00040002);
  put_le32 (pcap, 0);
  put_le32 (pcap, 0);
  put_le32 (pcap, 65536);
  put_le32 (pcap, 1);

  while (pos < size)
    {
      guint8 flags = data[pos];
      gsize len = 0, caplen;
      g_autofree guint8 *frame = NULL;

      if (size - pos >= 3)
        len = (gsize) data[pos + 1] | ((gsize) data[pos + 2] << 8);
      pos = MIN (pos + 3, size);
      len = MIN (len, size - pos);
      frame = g_malloc (MAX (len, 1));
      if (len > 0)
        memcpy (frame, data + pos, len);
      pos += len;
      if ((flags & FUZZ_CAPTURE_TO_GUEST) && len >= 6)
        memcpy (frame, guest_mac, 6);
      if ((flags & FUZZ_CAPTURE_FROM_GUEST) && len >= 12)
        memcpy (frame + 6, guest_mac, 6);
      caplen = (flags & FUZZ_CAPTURE_CLIPPED) ? len / 2 : len;
      if (caplen >= 12 && memcmp (frame + 6, guest_mac, 6) == 0)
        guest_frames++;

      put_le32 (pcap, (guint32) records);
      put_le32 (pcap, 0);
      put_le32 (pcap, (guint32) caplen);
      put_le32 (pcap, (guint32) len);
      if (caplen > 0)
        g_byte_array_append (pcap, frame, (guint) caplen);
      records++;
    }

  bytes = g_byte_array_free_to_bytes (g_steal_pointer (&pcap));
  airlock_capture_guest_init (&guest, guest_mac);
  capture = airlock_capture_analyse (bytes, &guest, &error);
  fuzz_check (capture != NULL && error == NULL);
  check_capture (capture, records, guest_frames);
}

/* The input as a pcap file. */
static void
run_file (const guint8 *data, gsize size)
{
  g_autoptr (GBytes) bytes = g_bytes_new (data, size);
  g_autoptr (AirlockCapture) capture = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockPcapReader) reader = NULL;
  AirlockCaptureGuest guest;
  AirlockPcapRecord record;
  guint64 records = 0;

  airlock_capture_guest_init (&guest, guest_mac);
  capture = airlock_capture_analyse (bytes, &guest, &error);
  fuzz_check ((capture == NULL) == (error != NULL));
  if (error != NULL)
    {
      fuzz_check (error->domain == AIRLOCK_PCAP_ERROR);
      fuzz_check (g_utf8_validate (error->message, -1, NULL));
      return;
    }

  reader = airlock_pcap_reader_new (bytes, NULL);
  fuzz_check (reader != NULL);
  while (airlock_pcap_reader_next (reader, &record, NULL))
    {
      fuzz_check (record.index == records);
      fuzz_check (record.caplen <= record.origlen);
      fuzz_check (record.caplen <= airlock_pcap_reader_get_snaplen (reader));
      fuzz_check (record.offset + AIRLOCK_PCAP_RECORD_HEADER_SIZE + record.caplen <= size);
      records++;
    }
  check_capture (capture, records, G_MAXUINT64);
}

typedef NetPayloadResult (*PayloadParser) (const guint8 *, gsize, char **);

static void
run_payload (PayloadParser parse, const guint8 *data, gsize size, gsize cut)
{
  g_autofree char *whole_name = NULL, *prefix_name = NULL;
  NetPayloadResult whole = parse (data, size, &whole_name);
  NetPayloadResult prefix = parse (data, cut, &prefix_name);

  fuzz_check ((whole == NET_PAYLOAD_FOUND) == (whole_name != NULL));
  fuzz_check ((prefix == NET_PAYLOAD_FOUND) == (prefix_name != NULL));
  if (whole_name != NULL)
    fuzz_check_safe_text (whole_name);
  if (prefix == NET_PAYLOAD_FOUND)
    fuzz_check (whole == NET_PAYLOAD_FOUND && strcmp (prefix_name, whole_name) == 0);
  if (prefix == NET_PAYLOAD_NONE)
    fuzz_check (whole == NET_PAYLOAD_NONE);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint64 h = fuzz_input_hash (data, size);
  /* an exact copy, so ASan sees the input's real extent */
  g_autofree guint8 *copy = g_memdup2 (data, size);
  gsize cut = size == 0 ? 0 : (gsize) (h % (size + 1));

  run_file (copy, size);
  run_frames (copy, size);
  run_payload (net_tls_client_hello_sni, copy, size, cut);
  run_payload (net_http_request_host, copy, size, cut);
  return 0;
}
