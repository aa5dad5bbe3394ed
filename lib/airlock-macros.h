/* Export and version macros shared by every public header. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include <glib.h>

/* Symbols are hidden unless marked (the library is built with
 * gnu_symbol_visibility: 'hidden'). */
#define AIRLOCK_PUBLIC __attribute__ ((visibility ("default"))) extern
