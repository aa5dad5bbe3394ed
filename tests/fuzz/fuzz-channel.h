/* Parameters shared by the channel fuzzer and its seed generator: the seeds
 * echo this nonce, so the fuzzer starts past the handshake. */
#pragma once

#include <stdint.h>

#include "protocol.h"

static const uint8_t fuzz_channel_nonce[AIRLOCK_NONCE_LEN] = {
  'a', 'i', 'r', 'l', 'o', 'c', 'k', '-', 'f', 'u', 'z', 'z', '-', 'n', 'o', 'n',
  'c', 'e', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c',
};

#define FUZZ_CHANNEL_HEARTBEAT_MS 1000
#define FUZZ_CHANNEL_TOLERANCE_MS 3000
