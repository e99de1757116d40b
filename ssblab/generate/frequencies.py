"""The distributions of a generated network, from ssb-fixtures 4 (``lib/frequencies.js``, ``lib/sample.js``).

ssb-fixtures bases its message-type mix on counts from the main network (arj03's ssb-new-format survey) and
the rest on its author's judgement; the numbers are kept here as facts, with their source, so that a dataset
made by ssblab and one made by ssb-fixtures can be compared. Where ssblab departs, the constant says why.
"""

from __future__ import annotations

__all__ = [
    "ABOUT_FIELDS",
    "ABOUT_IMAGE_SHAPES",
    "ABOUT_OTHER",
    "ACTIVITY_SKEW",
    "BLOB_TYPES",
    "CONTACT_KINDS",
    "DEFAULT_PRIVATE_FRACTION",
    "MAX_RECIPIENTS",
    "MENTION_BLOB_NAME",
    "MENTION_KINDS",
    "POPULARITY_SKEW",
    "POST_CHANNEL",
    "POST_MENTIONS",
    "POST_REPLY",
    "POST_SIZES",
    "PRIVATE_COUNT",
    "PUBLIC_TYPE_COUNTS",
    "REPLY_SKEW",
    "VOTE_NEGATIVE",
    "VOTE_SKEW",
]

# Messages of each type on the main network (ssb-fixtures MSG_TYPE_FREQUENCIES, not normalized). Its "other"
# type (62,462: ``{type: "other", number, etc}``) is left out: it carries nothing an analysis could use.
PUBLIC_TYPE_COUNTS: dict[str, int] = {"vote": 291_505, "post": 168_091, "contact": 59_912, "about": 11_528}
PRIVATE_COUNT = 82_034
DEFAULT_PRIVATE_FRACTION = PRIVATE_COUNT / (PRIVATE_COUNT + sum(PUBLIC_TYPE_COUNTS.values()))

# Author activity: ssb-fixtures picks the author of each message as ``authors[floor(u**2 * n)]``
# (paretoSample, shape 2), so the top fraction f of authors writes f**(1/2) of the messages (top 10%: 32%).
ACTIVITY_SKEW = 2.0
# Targets of contacts and private recipients use the same skew: popular authors get followed and messaged.
POPULARITY_SKEW = 2.0
# Reply targets: paretoSample shape 1.6 over the posts. ssb-fixtures skews towards the oldest posts; a
# streaming generator keeps a window of recent posts and skews towards the newest, which is how people reply.
REPLY_SKEW = 1.6
VOTE_SKEW = 2.0

POST_SIZES: dict[str, float] = {"short": 0.25, "medium": 0.4, "long": 0.35}
POST_CHANNEL = 0.3
POST_MENTIONS = 0.6
POST_REPLY = 0.7
MENTION_KINDS: dict[str, float] = {"author": 0.6, "blob": 0.3, "channel": 0.1}
MENTION_BLOB_NAME = 0.2
BLOB_TYPES: dict[str, float] = {"image/jpeg": 0.5, "image/png": 0.5}

VOTE_NEGATIVE = 0.05

CONTACT_KINDS: dict[str, float] = {"follow": 0.7, "unfollow": 0.1, "block": 0.15, "unblock": 0.05}

# Which fields an about sets (name / image / description and their combinations).
ABOUT_FIELDS: dict[tuple[str, ...], float] = {
    ("name",): 0.3,
    ("image",): 0.2,
    ("description",): 0.1,
    ("name", "image"): 0.2,
    ("name", "description"): 0.1,
    ("image", "description"): 0.05,
    ("name", "image", "description"): 0.05,
}
# Clients write an about's image as a bare blob id (Manyverse) or as an object (Patchwork, Patchbay).
ABOUT_IMAGE_SHAPES: dict[str, float] = {"string": 0.5, "big_object": 0.4, "small_object": 0.1}
ABOUT_OTHER = 0.02  # share of abouts that describe another feed

# private-box's limit; ssb-fixtures draws 1..min(authors - 1, 7) recipients, the author included
MAX_RECIPIENTS = 7
