/* SPDX-License-Identifier: MIT */
#include "enforce.h"

const char *const fs_enforce_names[FS_ENFORCE_COUNT] = {
    [FS_ENFORCE_AUTO] = "auto",
    [FS_ENFORCE_LIMITS] = "limits",
    [FS_ENFORCE_WEIGHTS] = "weights",
    [FS_ENFORCE_OFF] = "off",
};

const char *fs_enforce_name(enum fs_enforce e)
{
	return (unsigned)e < FS_ENFORCE_COUNT ? fs_enforce_names[e] : "?";
}
