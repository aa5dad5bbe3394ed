/* libairlock: prove whether a container image reaches for the network.
 * The umbrella header: <airlock.h> in the tree; installed as
 * airlock-1/airlock/airlock.h, which airlock-1/airlock.h (lib/include/) includes.
 * Its includes are relative to this file, so they find the headers beside it
 * in either layout (lib/meson.build). */
#pragma once

#define AIRLOCK_INSIDE

#include "airlock-version.h"
#include "airlock-macros.h"
#include "arch.h"
#include "paths.h"
#include "json.h"
#include "evidence/channel.h"
#include "evidence/spec.h"
#include "guestimg/guest-image.h"
#include "image/image.h"
#include "policy/policy.h"
#include "vm/vm.h"
#include "case/case.h"
#include "testing/testing.h"

#undef AIRLOCK_INSIDE
