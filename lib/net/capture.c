/* The capture analysis: pcap records → decoded frames → flows,
 * housekeeping and anomalies (see flows.h).  This file is the capture
 * itself: the record loop, who sent each frame (the guest or QEMU), where
 * the frame goes from there, and the getters; the parts it hands frames to
 * are listed in capture-private.h, with the bounds they keep. */
#include "config.h"

#include "capture-private.h"

#include <netinet/in.h>
#include <string.h>

#define ETHERNET_HEADER_SIZE 14

void
airlock_capture_guest_init (AirlockCaptureGuest *guest, const guint8 mac[6])
{
  static const guint8 ipv4[4] = { 10, 0, 2, 15 };
  static const guint8 ipv6[16] = { 0xfe, 0xc0, [15] = 0x15 };
  static const guint8 gateway4[4] = { 10, 0, 2, 2 };
  static const guint8 dns4[4] = { 10, 0, 2, 3 };

  g_return_if_fail (guest != NULL && mac != NULL);
  memset (guest, 0, sizeof *guest);
  memcpy (guest->mac, mac, 6);
  memcpy (guest->ipv4, ipv4, 4);
  memcpy (guest->ipv6, ipv6, 16);
  memcpy (guest->gateway4, gateway4, 4);
  memcpy (guest->dns4, dns4, 4);
  /* The kernel's default (addr_gen_mode eui64): fe80:: with the modified
   * EUI-64 of the MAC, the universal/local bit flipped. */
  guest->link_local[0] = 0xfe;
  guest->link_local[1] = 0x80;
  guest->link_local[8] = mac[0] ^ 0x02;
  guest->link_local[9] = mac[1];
  guest->link_local[10] = mac[2];
  guest->link_local[11] = 0xff;
  guest->link_local[12] = 0xfe;
  memcpy (guest->link_local + 13, mac + 3, 3);
}

static void
analyse_record (AirlockCapture *capture, const AirlockPcapRecord *record)
{
  NetPacket pkt;
  char why[200];
  int kind;

  net_decode_frame (record->data, record->caplen, record->origlen, &pkt);
  capture->record = record;
  capture->frames++;
  /* The MACs and addresses decide (a pcap records no direction): from the
   * guest's MAC is from the guest (a frame cut before its EtherType still
   * says who sent it); from QEMU's MAC and addresses to the guest is
   * QEMU's; anything else was sent by the guest under a forged source: it
   * is egress, and an anomaly. */
  if (record->caplen >= 12 && memcmp (record->data + 6, capture->guest.mac, 6) == 0)
    capture->from_guest = TRUE;
  else if (record->caplen < ETHERNET_HEADER_SIZE)
    capture->from_guest = FALSE;    /* an ETHERNET anomaly below */
  else if (capture->guest.sinkhole)
    capture->from_guest = FALSE;    /* the network's: the sinkhole refuses forged sources */
  else if (net_is_qemu_frame (capture, &pkt, why, sizeof why))
    capture->from_guest = FALSE;
  else
    {
      capture->from_guest = TRUE;
      net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_FOREIGN_MAC, why);
    }
  if (capture->from_guest)
    capture->guest_frames++;
  if (pkt.problem_set)
    net_capture_note_anomaly (capture, pkt.problem, pkt.reason);
  if (capture->from_guest && pkt.vlan)
    net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_VLAN_TAG,
                              "an 802.1Q tag: the guest has no VLAN interface");
  if (capture->from_guest && pkt.arp)
    net_judge_guest_arp (capture, &pkt);
  if (capture->from_guest && pkt.family != 0)
    net_judge_guest_source (capture, &pkt);

  if (pkt.arp)
    {
      net_capture_note_housekeeping (capture, AIRLOCK_HOUSEKEEPING_ARP);
      return;
    }
  if (pkt.family == 0)
    {
      if (!capture->from_guest && !pkt.problem_set)
        capture->unmatched_replies++;
      return;
    }
  kind = net_housekeeping_kind (capture, &pkt);
  if (kind >= 0 && capture->from_guest)
    net_judge_guest_housekeeping (capture, &pkt, (AirlockHousekeepingKind) kind);
  if (kind >= 0)
    net_capture_note_housekeeping (capture, (AirlockHousekeepingKind) kind);
  else if (capture->from_guest)
    net_capture_egress (capture, &pkt);
  else
    net_capture_reply (capture, &pkt);
}

/* ---- the capture ---- */

static AirlockCapture *
capture_new (const AirlockCaptureGuest *guest)
{
  AirlockCapture *capture = g_new0 (AirlockCapture, 1);

  capture->guest = *guest;
  capture->flows = g_ptr_array_new_with_free_func ((GDestroyNotify) net_flow_state_free);
  capture->flow_index = g_hash_table_new (g_str_hash, g_str_equal);
  capture->fragments = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                              (GDestroyNotify) g_bytes_unref, NULL);
  capture->housekeeping_list = g_ptr_array_new ();
  capture->anomaly_list = g_ptr_array_new ();
  return capture;
}

void
airlock_capture_free (AirlockCapture *capture)
{
  if (capture == NULL)
    return;
  g_hash_table_unref (capture->fragments);
  g_hash_table_unref (capture->flow_index);
  g_ptr_array_unref (capture->flows);
  g_ptr_array_unref (capture->housekeeping_list);
  g_ptr_array_unref (capture->anomaly_list);
  for (guint i = 0; i < AIRLOCK_CAPTURE_ANOMALY_N_KINDS; i++)
    g_free (capture->anomalies[i].first_reason);
  g_free (capture);
}

AirlockCapture *
airlock_capture_analyse (GBytes *pcap, const AirlockCaptureGuest *guest, GError **error)
{
  g_autoptr (AirlockPcapReader) reader = NULL;
  g_autoptr (AirlockCapture) capture = NULL;
  AirlockPcapRecord record;
  GError *read_error = NULL;

  g_return_val_if_fail (pcap != NULL, NULL);
  g_return_val_if_fail (guest != NULL, NULL);

  reader = airlock_pcap_reader_new (pcap, error);
  if (reader == NULL)
    return NULL;
  capture = capture_new (guest);
  while (airlock_pcap_reader_next (reader, &record, &read_error))
    analyse_record (capture, &record);
  if (read_error != NULL)
    {
      g_propagate_error (error, read_error);
      return NULL;
    }

  /* Connections still open: a DNS message they ended inside, and a first
   * payload that never completed. */
  for (guint i = 0; i < capture->flows->len; i++)
    {
      FlowState *state = capture->flows->pdata[i];
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, state->connections);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          TcpConnection *conn = value;

          net_tcp_connection_close (capture, state, conn);
        }
      g_hash_table_remove_all (state->connections);
    }
  g_hash_table_remove_all (capture->fragments);

  for (guint i = 0; i < AIRLOCK_HOUSEKEEPING_N_KINDS; i++)
    if (capture->housekeeping[i].count + capture->housekeeping[i].replies > 0)
      g_ptr_array_add (capture->housekeeping_list, &capture->housekeeping[i]);
  for (guint i = 0; i < AIRLOCK_CAPTURE_ANOMALY_N_KINDS; i++)
    if (capture->anomalies[i].count > 0)
      g_ptr_array_add (capture->anomaly_list, &capture->anomalies[i]);
  capture->record = NULL;
  return g_steal_pointer (&capture);
}

GPtrArray *
airlock_capture_get_flows (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, NULL);
  return capture->flows;
}

const AirlockFlow *
airlock_capture_lookup_flow (AirlockCapture *capture, const char *key)
{
  FlowState *state;

  g_return_val_if_fail (capture != NULL, NULL);
  g_return_val_if_fail (key != NULL, NULL);
  state = g_hash_table_lookup (capture->flow_index, key);
  return state != NULL ? &state->flow : NULL;
}

guint64
airlock_capture_get_frames (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, 0);
  return capture->frames;
}

guint64
airlock_capture_get_guest_frames (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, 0);
  return capture->guest_frames;
}

guint64
airlock_capture_get_unmatched_replies (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, 0);
  return capture->unmatched_replies;
}
