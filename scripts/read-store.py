#!/usr/bin/env python3
"""An independent reader of a CipherCask store (format versions 2 to 5: 4 is 3 with key epochs,
5 is 4 with an authenticated header, a store identity and chained segments).

Written from Docs/FORMAT.md and Docs/CODEC.md only, to check that those pages describe the
format completely and truly. It never writes to the store.

Usage:  CASK_PASSWORD=... scripts/read-store.py [--check-hints] STORE_DIR

Prints the live contents as JSON lines {"key": <text>, "value": <base64>} sorted by the
key's UTF-8 bytes. Anything FORMAT.md calls invalid or damaged (and a few things it leaves
unspecified, marked GAP below) ends the program with exit status 1 and one line on stderr.
The two conditions FORMAT.md treats as normal after a crash (a torn tail of the last
segment, reserved zeros at the end of the last ordinary segment) are accepted and noted on
stderr. Status 2 is a usage error.

Only the standard library and `cryptography` (for AES-256-CBC) are used.
"""

import base64
import errno
import fcntl
import hashlib
import hmac
import json
import os
import re
import struct
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


class Invalid(Exception):
    """Something the format says is invalid (or that the reader could not decide)."""


def fail(message):
    raise Invalid(message)


# --- CRC-32C (FORMAT.md section 1) ------------------------------------------------------

def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283

# --- RNCryptor v3 (CODEC.md section 1) -----------------------------------------------------

KEY_HEADER = 18
PASSWORD_HEADER = 34
HMAC_LENGTH = 32
BLOCK = 16


def _check_shape(message, options, header, what):
    if len(message) < 2:
        fail(f"{what}: message too short ({len(message)} bytes)")
    if message[0] != 3:
        fail(f"{what}: RNCryptor version {message[0]}, expected 3")
    if message[1] != options:
        fail(f"{what}: RNCryptor options byte {message[1]}, expected {options}")
    body = len(message) - header - HMAC_LENGTH
    if body < BLOCK or body % BLOCK != 0:
        fail(f"{what}: message of {len(message)} bytes is too short or not whole blocks")


def _open(message, encryption_key, hmac_key, header, what):
    expected = hmac.new(hmac_key, message[:-HMAC_LENGTH], hashlib.sha256).digest()
    if not hmac.compare_digest(expected, message[-HMAC_LENGTH:]):
        fail(f"{what}: HMAC does not verify")
    iv = message[header - 16:header]
    ciphertext = message[header:-HMAC_LENGTH]
    decryptor = Cipher(algorithms.AES(encryption_key), modes.CBC(iv)).decryptor()
    padded = decryptor.update(ciphertext) + decryptor.finalize()
    pad = padded[-1]
    if pad < 1 or pad > BLOCK or padded[-pad:] != bytes([pad]) * pad:
        fail(f"{what}: bad PKCS#7 padding")
    return padded[:-pad]


def open_key_message(message, keys, what):
    _check_shape(message, 0, KEY_HEADER, what)
    return _open(message, keys[0], keys[1], KEY_HEADER, what)


def open_password_message(message, password, what):
    _check_shape(message, 1, PASSWORD_HEADER, what)
    encryption_salt, hmac_salt = message[2:10], message[10:18]
    encryption_key = hashlib.pbkdf2_hmac("sha1", password, encryption_salt, 10000, 32)
    hmac_key = hashlib.pbkdf2_hmac("sha1", password, hmac_salt, 10000, 32)
    return _open(message, encryption_key, hmac_key, PASSWORD_HEADER, what)


# --- Format constants (FORMAT.md) ----------------------------------------------------------

HEADER_MAGIC = b"CIPHCASK"
SCRYPT_FIELDS = 32  # N(8) r(4) p(4) salt(16)
SCRYPT_MAX_MEMORY = 256 << 20
SCRYPT_MAX_WORK = 1 << 30
SEGMENT_MAGIC = b"CCSEGMNT"
HINT_MAGIC = b"CCHINTS1"
HINT_MAGIC_GROUPED = b"CCHINTS2"
# Section 6: a grouped hint whose attachment sections name their groups by number in a table.
HINT_MAGIC_NAMED = b"CCHINTS3"
# A grouped hint's group section ends within this many bytes of the payload (tag included).
HINT_SIZING_LENGTH = 4096
READABLE_VERSIONS = (2, 3, 4, 5)
KEY_EPOCHS_VERSION = 4
AUTHENTICATED_VERSION = 5
IDENTITY_LENGTH = 16
MAC_LENGTH = 32
# Set from the header: every segment and hint of the store must have this version (3 for a
# version 4 header, whose records are version 3).
FORMAT_VERSION = None
HEADER_VERSION = None
STORE_IDENTITY = None
TAG_KEY_RING = 0x52
# Version 3 (section 5.4): tags in front of every sealed plaintext, a binding in key messages.
TAG_KEY, TAG_VALUE, TAG_HINT, TAG_MANIFEST = 0x4B, 0x56, 0x48, 0x4D
MANIFEST_MAGIC = b"CCMANIFS"
KEY_BINDING = 56
# Section 5.4, version 5: a tombstone's short binding (tag, flags, segment, offset, sequence).
TAG_TOMBSTONE = 0x44
TOMBSTONE_BINDING = 22
# Section 5.4, version 5: a put's key message with attached keys after its key (tag 'A'), and
# the hint entry type of such a put (section 6).
TAG_ATTACHED = 0x41
HINT_TYPE_ATTACHED = 3
SEGMENT_HEADER = 32
# Section 5.1, version 5: the link after the 32 bytes (identity, predecessor, MAC).
SEGMENT_LINK = 104
RECORD_HEADER = 24
MAX_SEGMENT = 2**32 - 1
TYPE_PUT, TYPE_DELETE = 1, 2
FLAG_END, FLAG_START = 0x01, 0x02

SEGMENT_NAME = re.compile(r"^([0-9a-f]{8})\.seg$")
HINT_NAME = re.compile(r"^([0-9a-f]{8})\.hint$")
# A position that could start a plausible record header: type 1 or 2, no unknown flag bits,
# reserved bytes zero (FORMAT.md section 9). Used to find candidates for resynchronisation.
CANDIDATE = re.compile(rb"(?=[\x00-\xff]{4}[\x01\x02][\x00-\x03]\x00\x00)")


def u16(data, offset):
    return struct.unpack_from("<H", data, offset)[0]


def u32(data, offset):
    return struct.unpack_from("<I", data, offset)[0]


def u64(data, offset):
    return struct.unpack_from("<Q", data, offset)[0]


def decode_key(raw, what):
    if not 1 <= len(raw) <= 65535:
        fail(f"{what}: store key of {len(raw)} bytes (must be 1 - 65,535)")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        # GAP: FORMAT.md demands valid UTF-8 of hint keys only; for keys in records it says
        # nothing. (The engine drops such a record's batch as damage, "key is not valid UTF-8".)
        # A record key of 0 or more than 65,535 bytes is not covered either (the engine traps on
        # both: an empty one at open, a long one when it writes the segment's hint).
        fail(f"{what}: store key is not valid UTF-8")
    return raw


# --- The header file CASK (FORMAT.md section 3) --------------------------------------------

def read_header(directory, password):
    path = os.path.join(directory, "CASK")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        fail("CASK: no header file: not a CipherCask store")
    if data[:8] != HEADER_MAGIC:
        fail("CASK: bad magic: not a CipherCask store")
    if len(data) < 16:
        fail("CASK: header is truncated")
    w = u32(data, 12)
    version = u16(data, 8)
    flags = u16(data, 10)
    ring = None
    identity = None
    end = 16 + w
    authenticated = bool(flags & 0x0008)
    # Section 3a: a version 4 header with flag bit 2 has the key ring between W and the CRC;
    # section 3b: so does one with flag bit 3 (version 5, or a version 5 header changed back).
    if (version >= KEY_EPOCHS_VERSION or authenticated) and flags & 0x0004:
        if len(data) < end + 4:
            fail("CASK: header is truncated")
        r = u32(data, end)
        ring = data[end + 4:end + 4 + r]
        end += 4 + r
    # Section 3b: with flag bit 3, the store identity and the MAC follow, before the CRC.
    if authenticated:
        if len(data) < end + IDENTITY_LENGTH + MAC_LENGTH:
            fail("CASK: header is truncated")
        identity = data[end:end + IDENTITY_LENGTH]
        end += IDENTITY_LENGTH + MAC_LENGTH
    if len(data) < end + 4:
        fail("CASK: header is truncated")
    if u32(data, end) != crc32c(data[:end]):
        fail("CASK: header checksum mismatch")
    if version not in READABLE_VERSIONS:
        fail(f"CASK: unsupported format version {version}")
    if version >= KEY_EPOCHS_VERSION and ring is None:
        fail(f"CASK: a version {version} header without its key ring")
    if version == AUTHENTICATED_VERSION and identity is None:
        fail("CASK: a version 5 header without its authenticator")
    global FORMAT_VERSION, HEADER_VERSION, STORE_IDENTITY
    HEADER_VERSION = version
    FORMAT_VERSION = min(version, 3)
    STORE_IDENTITY = identity
    wrapped = data[16:16 + w]
    # Bytes after the CRC are ignored (section 3); other flag bits are ignored too.
    if not flags & 0x0001:
        fail("CASK: the data key is wrapped under caller keys, not a password (wrongCredentialType)")
    try:
        if flags & 0x0002:
            data_key = open_scrypt_wrapped(wrapped, password)
        else:
            # GAP: section 3 does not say what happens when the flag and the wrapped message's
            # own options byte disagree; this reader refuses it.
            data_key = open_password_message(wrapped, password, "CASK wrapped key")
    except Invalid as error:
        if "HMAC" in str(error):
            fail("CASK: wrong password (the wrapped key's HMAC does not verify)")
        raise
    # Section 3b: from version 5 on the wrapped plaintext is the data key and the version.
    if len(data_key) == 66:
        bound = u16(data_key, 64)
        if bound != version:
            fail(f"CASK: the header says version {version}, its wrapped key was written for version {bound} "
                 "(a downgraded header)")
        data_key = data_key[:64]
    elif len(data_key) != 64:
        fail(f"CASK: wrapped data key is {len(data_key)} bytes, expected 64 or 66")
    elif version >= AUTHENTICATED_VERSION:
        fail("CASK: a version 5 header whose wrapped key does not name its version")
    current = (data_key[:32], data_key[32:])
    if authenticated:
        mac_end = end - MAC_LENGTH
        expected = hmac.new(current[1], data[:mac_end], hashlib.sha256).digest()
        if not hmac.compare_digest(expected, data[mac_end:end]):
            fail("CASK: the header does not authenticate under its data key")
    if ring is None:
        return {"current": 0, "keys": {0: current}, "pinned": None}
    return open_key_ring(ring, current)


def open_key_ring(ring, current):
    """Section 3a: the ring, a key message under the current data key."""
    plain = open_key_message(ring, current, "CASK key ring")
    if len(plain) < 48 or plain[0] != TAG_KEY_RING or plain[1] & ~1 or plain[2] or plain[3]:
        fail("CASK: malformed key ring")
    epoch, count = u32(plain, 4), u32(plain, 8)
    if len(plain) != 48 + 68 * count:
        fail("CASK: malformed key ring (length)")
    keys = {epoch: current}
    previous = -1
    for index in range(count):
        at = 48 + 68 * index
        older = u32(plain, at)
        if older >= epoch or older <= previous:
            fail("CASK: key ring epochs not increasing below the current one")
        previous = older
        keys[older] = (plain[at + 4:at + 36], plain[at + 36:at + 68])
    pinned = None
    if plain[1] & 1:
        pinned = (u32(plain, 12), plain[16:48])
        if pinned[0] not in keys or pinned[0] == epoch:
            fail("CASK: key ring pins a manifest under an epoch it does not hold")
    return {"current": epoch, "keys": keys, "pinned": pinned}


def open_scrypt_wrapped(wrapped, password):
    """Section 3 with flag bit 1: N(8) r(4) p(4) salt(16), then a key message under scrypt's
    64 bytes. The bounds are checked before hashlib allocates anything."""
    if len(wrapped) < SCRYPT_FIELDS:
        fail("CASK: scrypt parameters are truncated")
    n, r, p = u64(wrapped, 0), u32(wrapped, 8), u32(wrapped, 12)
    salt = wrapped[16:SCRYPT_FIELDS]
    if n < 2 or n & (n - 1):
        fail("CASK: scrypt N is not a power of two of at least 2")
    if not 1 <= r <= 64 or not 1 <= p <= 64:
        fail("CASK: scrypt r or p is out of bounds")
    memory = 128 * r * (n + p + 2)
    if n > 1 << 40 or memory > SCRYPT_MAX_MEMORY or 128 * r * n * p > SCRYPT_MAX_WORK:
        fail("CASK: scrypt parameters need too much memory or work")
    derived = hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, maxmem=memory + (1 << 20), dklen=64)
    return open_key_message(wrapped[SCRYPT_FIELDS:], (derived[:32], derived[32:]), "CASK wrapped key")


# --- Segments (FORMAT.md sections 5, 8, 9) -------------------------------------------------

class Record:
    __slots__ = ("offset", "length", "type", "flags", "sequence", "key", "value", "attached")

    def __init__(self, offset, length, rtype, flags, sequence):
        self.offset, self.length, self.type, self.flags, self.sequence = offset, length, rtype, flags, sequence
        self.key = None
        self.value = None
        self.attached = []      # section 5.4, version 5: the keys its key message attaches


class AttachedKey:
    """Section 5.4: a key a put's record attaches; it points at that record, value empty."""
    __slots__ = ("owner", "offset", "value")

    def __init__(self, owner):
        self.owner, self.offset, self.value = owner, owner.offset, b""


def parse_attachments(section, owner, what):
    """Section 5.4: the attachment section after an owner's key; returns the keys it spells."""
    if 0 not in owner:
        fail(f"{what}: a key without a group carries attached keys")
    owner_id = owner[owner.index(0) + 1:]
    keys, position = [], 0

    def take(count):
        nonlocal position
        if position + count > len(section):
            fail(f"{what}: attachment section ends early")
        part = section[position:position + count]
        position += count
        return bytes(part)

    groups = u16(take(2), 0)
    if groups == 0:
        fail(f"{what}: attachment section lists no group")
    for _ in range(groups):
        name = take(u16(take(2), 0))
        texts = u16(take(2), 0)
        if not name or 0 in name or texts == 0:
            fail(f"{what}: malformed group in the attachment section")
        for _ in range(texts):
            text = take(u16(take(2), 0))
            if 0 in text:
                fail(f"{what}: attached text holds a 00 byte")
            keys.append(decode_key(name + b"\x00" + text + b"\x00" + owner_id, what + " attached key"))
    if position != len(section):
        fail(f"{what}: {len(section) - position} bytes after the attachment section")
    return keys


class Segment:
    def __init__(self, name, file_id, data, base, sub, epoch, keys, link=None):
        self.name, self.file_id, self.data, self.base, self.sub = name, file_id, data, base, sub
        self.epoch, self.keys = epoch, keys     # section 3a: the key epoch its records are under
        self.link = link        # section 5.1, version 5: identity and predecessor
        self.start = SEGMENT_HEADER + (SEGMENT_LINK if link is not None else 0)
        # Section 5.4, version 5: the identity's first 4 bytes in the binding's offset field.
        self.stamp = int.from_bytes(link["identity"][:4], "little") << 32 if link is not None else 0
        self.records = []       # every valid record, in file order
        self.applied = []       # the records of complete batches, in file order
        self.valid_end = self.start
        self.file_length = len(data)


def read_segment_header(name, file_id, data):
    if len(data) < SEGMENT_HEADER:
        fail(f"{name}: unreadable segment: header is short ({len(data)} bytes)")
    if data[:8] != SEGMENT_MAGIC:
        fail(f"{name}: unreadable segment: bad magic")
    if u32(data, 28) != crc32c(data[:28]):
        fail(f"{name}: unreadable segment: header checksum mismatch")
    version = u16(data, 8)
    expected = AUTHENTICATED_VERSION if HEADER_VERSION == AUTHENTICATED_VERSION else FORMAT_VERSION
    if version != expected:
        fail(f"{name}: unsupported format version {version}")
    if u32(data, 12) != file_id:
        fail(f"{name}: unreadable segment: header names file id {u32(data, 12):08x}")
    base, sub, epoch = u32(data, 16), u32(data, 20), u32(data, 24)
    # GAP (guess): section 8 says a writer's segment gets base = its own file id, sub = 0,
    # but not that a reader may rely on it. Checked here as a consistency rule (the engine
    # does not check it: it orders by (base, sub) whatever the id).
    if sub == 0 and base != file_id:
        fail(f"{name}: order sub 0 but order base {base:08x} differs from the file id")
    return base, sub, epoch


def read_segment_link(name, data, keys):
    """Section 5.1, version 5: the link after the 32 bytes, under the MAC of its epoch's key."""
    end = SEGMENT_HEADER + SEGMENT_LINK
    if len(data) < end:
        fail(f"{name}: unreadable segment: its link is short")
    expected = hmac.new(keys[1], data[:end - MAC_LENGTH], hashlib.sha256).digest()
    if not hmac.compare_digest(expected, data[end - MAC_LENGTH:end]):
        fail(f"{name}: the segment's header does not authenticate")
    flags = u32(data, 60)
    if flags & ~1:
        fail(f"{name}: unknown link flags")
    previous = None
    if flags & 1:
        previous = {"id": u32(data, 48), "order": (u32(data, 52), u32(data, 56)), "length": u64(data, 64),
                    "tail": data[72:104]}
    return {"identity": data[32:48], "previous": previous}


def plausible(data, offset, end):
    """The header checks of section 9, without the CRC. Returns (type, flags, K, V) or None."""
    if offset + RECORD_HEADER > end:
        return None
    rtype, flags, reserved = data[offset + 4], data[offset + 5], u16(data, offset + 6)
    k, v = u32(data, offset + 16), u32(data, offset + 20)
    if rtype not in (TYPE_PUT, TYPE_DELETE) or flags & ~0x03 or reserved != 0 or k == 0:
        return None
    if rtype == TYPE_DELETE and v != 0:
        return None
    return rtype, flags, k, v


def valid_record(data, offset, end):
    fields = plausible(data, offset, end)
    if fields is None:
        return None
    rtype, flags, k, v = fields
    length = RECORD_HEADER + k + v
    if offset + length > end:
        return None
    if u32(data, offset) != crc32c(memoryview(data)[offset + 4:offset + length]):
        return None
    return rtype, flags, k, v, length


def next_valid_record(data, start, end):
    for match in CANDIDATE.finditer(data, start, end):
        if valid_record(data, match.start(), end) is not None:
            return match.start()
    return None


def scan_segment(segment, is_last):
    data, name, keys = segment.data, segment.name, segment.keys
    end = min(len(data), MAX_SEGMENT)
    if len(data) > MAX_SEGMENT:
        fail(f"{name}: segment longer than the format allows (damage)")
    position = segment.start
    batch = []
    notes = []
    while position < end:
        found = valid_record(data, position, end)
        if found is None:
            tail = data[position:end]
            if is_last and segment.sub == 0 and not batch and tail.count(0) == len(tail):
                notes.append(f"{name}: {len(tail)} bytes of reserved zeros at {position}")
                segment.valid_end = position
                return notes
            later = next_valid_record(data, position + 1, end)
            if later is not None:
                fail(f"{name}: damaged record at offset {position} (a valid record follows at {later})")
            if not is_last:
                fail(f"{name}: damaged tail of a sealed segment at offset {position}")
            notes.append(f"{name}: torn tail of {end - (batch[0].offset if batch else position)} bytes "
                         f"at {batch[0].offset if batch else position}"
                         + (f", {len(batch)} record(s) of an unfinished batch dropped" if batch else ""))
            return notes
        rtype, flags, k, v, length = found
        if rtype == TYPE_PUT and v == 0:
            # Section 5.2: "A put always has V >= 66". Not among the validity checks of
            # section 9, so a scanner may take such a record as valid. GAP: the engine indexes
            # it at open and reports it only at get / verify.
            fail(f"{name}: put record at {position} has no value message (V = 0)")
        record = Record(position, length, rtype, flags, u64(data, position + 8))
        what = f"{name} record at {position}"
        key_message = bytes(data[position + RECORD_HEADER:position + RECORD_HEADER + k])
        key_plain = open_key_message(key_message, keys, what + " key message")
        value_message = bytes(data[position + RECORD_HEADER + k:position + length])
        if FORMAT_VERSION >= 3:
            key_plain = check_binding(key_plain, record, segment.file_id, value_message, what, segment.stamp,
                                      short_tombstones=segment.link is not None)
        if key_plain[:1] == bytes([TAG_ATTACHED]):
            key_plain = key_plain[1:]
            key_length = u16(key_plain, 0) if len(key_plain) >= 2 else 0
            if len(key_plain) < 2 + key_length:
                fail(f"{what}: attached key length runs past the key message")
            record.key = decode_key(key_plain[2:2 + key_length], what)
            record.attached = parse_attachments(key_plain[2 + key_length:], record.key, what)
        else:
            record.key = decode_key(key_plain, what)
        if rtype == TYPE_PUT:
            plain = open_key_message(value_message, keys, what + " value message")
            if FORMAT_VERSION >= 3:
                if not plain or plain[0] != TAG_VALUE:
                    fail(f"{what}: value message is not tagged as a value")
                plain = plain[1:]
            if len(plain) < 2:
                fail(f"{what}: value plaintext shorter than its key length field")
            key_length = u16(plain, 0)
            if len(plain) < 2 + key_length or key_length != len(record.key) \
                    or plain[2:2 + key_length] != record.key:
                fail(f"{what}: value belongs to another key")
            record.value = plain[2 + key_length:]
        segment.records.append(record)
        if flags & FLAG_START:
            if batch:
                fail(f"{name}: batch without its commit marker at {batch[0].offset}")
            batch = [record]
        elif not batch:
            fail(f"{name}: record at {position} continues a batch whose start is missing")
        else:
            batch.append(record)
        if flags & FLAG_END:
            check_batch(batch, name)
            segment.applied.extend(batch)
            batch = []
            segment.valid_end = position + length
        position += length
    if batch:
        if not is_last:
            fail(f"{name}: damaged tail of a sealed segment: batch at {batch[0].offset} has no commit marker")
        notes.append(f"{name}: torn tail: unfinished batch of {len(batch)} record(s) at {batch[0].offset} dropped")
    return notes


def check_short_binding(plain, record, file_id, what, stamp):
    """Section 5.4, version 5: a tombstone's short binding; returns the key bytes."""
    if record.type != TYPE_DELETE:
        fail(f"{what}: record type {record.type}, its key message is a tombstone's (forged record)")
    if len(plain) < TOMBSTONE_BINDING:
        fail(f"{what}: tombstone's key message is shorter than its binding")
    if plain[1] != record.flags:
        fail(f"{what}: flags {record.flags}, its key message says {plain[1]}")
    if u32(plain, 2) != file_id:
        fail(f"{what}: key message sealed for segment {u32(plain, 2):08x} (moved record)")
    if u64(plain, 6) & 0xFFFFFFFF != record.offset:
        fail(f"{what}: key message sealed for offset {u64(plain, 6) & 0xFFFFFFFF} (moved record)")
    if u64(plain, 6) >> 32 != stamp >> 32:
        fail(f"{what}: key message sealed by another store or copy sharing the data key")
    if u64(plain, 14) != record.sequence:
        fail(f"{what}: sequence {record.sequence}, its key message says {u64(plain, 14)}")
    return plain[TOMBSTONE_BINDING:]


def check_binding(plain, record, file_id, value_message, what, stamp=0, short_tombstones=False):
    """Section 5.4: a version 3 key message names its record's place; returns the key bytes."""
    if short_tombstones and plain[:1] == bytes([TAG_TOMBSTONE]):
        return check_short_binding(plain, record, file_id, what, stamp)
    attaching = short_tombstones and plain[:1] == bytes([TAG_ATTACHED]) and record.type == TYPE_PUT
    if len(plain) < KEY_BINDING or (plain[0] != TAG_KEY and not attaching):
        fail(f"{what}: key message is not tagged as a key")
    if plain[3] != 0:
        fail(f"{what}: key message's reserved byte is set")
    digest = value_message[-32:] if record.type == TYPE_PUT else bytes(32)
    if plain[1] != record.type:
        fail(f"{what}: record type {record.type}, its key message says {plain[1]} (forged record)")
    if short_tombstones and record.type == TYPE_DELETE:
        fail(f"{what}: a version 5 tombstone's key message has the long binding")
    if plain[2] != record.flags:
        fail(f"{what}: flags {record.flags}, its key message says {plain[2]}")
    if u32(plain, 4) != file_id:
        fail(f"{what}: key message sealed for segment {u32(plain, 4):08x} (moved record)")
    if u64(plain, 8) & 0xFFFFFFFF != record.offset:
        fail(f"{what}: key message sealed for offset {u64(plain, 8) & 0xFFFFFFFF} (moved record)")
    if u64(plain, 8) >> 32 != stamp >> 32:
        fail(f"{what}: key message sealed by another store or copy sharing the data key")
    if u64(plain, 16) != record.sequence:
        fail(f"{what}: sequence {record.sequence}, its key message says {u64(plain, 16)}")
    if not hmac.compare_digest(plain[24:56], digest):
        fail(f"{what}: value message is not the one its key message was sealed with")
    # An attaching key message keeps its tag in front of the key's length for the caller.
    return bytes([TAG_ATTACHED]) + plain[KEY_BINDING:] if attaching else plain[KEY_BINDING:]


def check_batch(batch, name):
    keys_seen = set()
    for index, record in enumerate(batch):
        if record.key in keys_seen:
            fail(f"{name}: batch at {batch[0].offset} holds key twice (section 5.3 says at most once)")
        keys_seen.add(record.key)
        if index and record.sequence != batch[index - 1].sequence + 1:
            fail(f"{name}: batch at {batch[0].offset}: sequence numbers not consecutive "
                 f"({batch[index - 1].sequence} then {record.sequence})")


# --- Hints (FORMAT.md section 6) ------------------------------------------------------------

def read_hint(directory, name, keys):
    with open(os.path.join(directory, name), "rb") as handle:
        data = handle.read()
    if data[:8] not in (HINT_MAGIC, HINT_MAGIC_GROUPED, HINT_MAGIC_NAMED):
        fail(f"{name}: bad magic")
    grouped = data[:8] in (HINT_MAGIC_GROUPED, HINT_MAGIC_NAMED)
    named = data[:8] == HINT_MAGIC_NAMED
    payload = open_key_message(data[8:], keys, f"{name} payload")
    tag_length = 0
    if FORMAT_VERSION >= 3:
        if not payload or payload[0] != TAG_HINT:
            fail(f"{name}: payload is not tagged as a hint")
        payload = payload[1:]
        tag_length = 1
    if len(payload) < 28:
        fail(f"{name}: payload of {len(payload)} bytes is shorter than its 28-byte head")
    version = u16(payload, 0)
    if version != FORMAT_VERSION:
        fail(f"{name}: hint version {version}")
    head = {"id": u32(payload, 4), "length": u64(payload, 8), "max_sequence": u64(payload, 16)}
    count = u32(payload, 24)
    entries = []
    position = 28
    if grouped:
        # The group section (FORMAT.md section 6): sizes for the index, never checked against
        # the entries by the engine; here each count must be what the entries give.
        if position + 6 > len(payload):
            fail(f"{name}: payload ends inside the group section")
        head["ungrouped_puts"] = u32(payload, position)
        listed = u16(payload, position + 4)
        position += 6
        groups = {}
        for index in range(listed):
            if position + 6 > len(payload):
                fail(f"{name}: payload ends inside group record {index}")
            puts, name_length = u32(payload, position), u16(payload, position + 4)
            group = payload[position + 6:position + 6 + name_length]
            if len(group) != name_length:
                fail(f"{name}: payload ends inside the name of group record {index}")
            groups[bytes(group)] = puts
            position += 6 + name_length
        if tag_length + position > HINT_SIZING_LENGTH:
            fail(f"{name}: group section ends at {tag_length + position}, past {HINT_SIZING_LENGTH}")
        head["groups"] = groups
    names = None
    if named:
        # Section 6, "CCHINTS3": the table of group names the attachment sections refer to.
        if STORE_IDENTITY is None or position + 2 > len(payload):
            fail(f"{name}: a names table where it cannot be")
        names = []
        listed = u16(payload, position)
        position += 2
        for index in range(listed):
            if position + 2 > len(payload):
                fail(f"{name}: payload ends inside the names table")
            name_length = u16(payload, position)
            group = bytes(payload[position + 2:position + 2 + name_length])
            if name_length == 0 or len(group) != name_length:
                fail(f"{name}: name {index} of the names table is empty or cut")
            names.append(group)
            position += 2 + name_length
    for index in range(count):
        if position + 12 > len(payload):
            fail(f"{name}: payload ends inside entry {index}")
        etype, key_length = payload[position], u16(payload, position + 2)
        offset, length = u32(payload, position + 4), u32(payload, position + 8)
        if etype not in (TYPE_PUT, TYPE_DELETE, HINT_TYPE_ATTACHED) or (
                etype == HINT_TYPE_ATTACHED and STORE_IDENTITY is None):
            fail(f"{name}: entry {index} has type {etype}")
        key = bytes(payload[position + 12:position + 12 + key_length])
        if len(key) != key_length:
            fail(f"{name}: payload ends inside the key of entry {index}")
        decode_key(key, f"{name} entry {index}")
        position += 12 + key_length
        attached = []
        if etype == HINT_TYPE_ATTACHED:
            if position + 4 > len(payload):
                fail(f"{name}: payload ends inside entry {index}")
            section_length = u32(payload, position)
            section = payload[position + 4:position + 4 + section_length]
            if section_length == 0 or len(section) != section_length:
                fail(f"{name}: entry {index} has a cut attachment section")
            if names is not None:
                section = expand_named_section(bytes(section), names, f"{name} entry {index}")
            attached = parse_attachments(section, key, f"{name} entry {index}")
            position += 4 + section_length
            etype = TYPE_PUT
        entries.append((etype, offset, length, key, attached))
    if position != len(payload):
        fail(f"{name}: {len(payload) - position} bytes left over after the last entry")
    if grouped:
        ungrouped, by_group = 0, {}
        for etype, _, _, key, _ in entries:
            if etype != TYPE_PUT:
                continue
            if 0 in key:
                group = bytes(key[:key.index(0)])
                by_group[group] = by_group.get(group, 0) + 1
            else:
                ungrouped += 1
        if head["ungrouped_puts"] != ungrouped:
            fail(f"{name}: group section says {head['ungrouped_puts']} ungrouped puts, the entries {ungrouped}")
        for group, puts in head["groups"].items():
            if by_group.get(group) != puts:
                fail(f"{name}: group section says {puts} puts of a group, the entries {by_group.get(group, 0)}")
    return head, entries


def expand_named_section(section, names, what):
    """Section 6, "CCHINTS3": each group of the section gives its name's number (2) in the
    table instead of its name length and name; returns the section as a record holds it."""
    if len(section) < 2:
        fail(f"{what}: attachment section ends early")
    groups = u16(section, 0)
    out, position = bytearray(section[:2]), 2
    for _ in range(groups):
        if position + 4 > len(section):
            fail(f"{what}: attachment section ends early")
        number, texts = u16(section, position), u16(section, position + 2)
        if number >= len(names):
            fail(f"{what}: a group number past the names table")
        start = position + 2
        position += 4
        for _ in range(texts):
            if position + 2 > len(section):
                fail(f"{what}: attachment section ends early")
            position += 2 + u16(section, position)
        if position > len(section):
            fail(f"{what}: attachment section ends early")
        out += struct.pack("<H", len(names[number])) + names[number] + section[start:position]
    if position != len(section):
        fail(f"{what}: {len(section) - position} bytes after the attachment section")
    return bytes(out)


def check_hint(name, head, entries, segment):
    if segment is None:
        fail(f"{name}: orphan hint (no segment of that id)")
    if head["id"] != segment.file_id:
        fail(f"{name}: names segment {head['id']:08x}")
    if head["length"] != segment.file_length:
        fail(f"{name}: stale hint: states length {head['length']}, the segment is {segment.file_length} bytes")
    by_offset = {record.offset: record for record in segment.applied}
    previous = -1
    listed = set()
    for index, (etype, offset, length, key, attached) in enumerate(entries):
        # Section 6: a delete of length 0 is a key the record at that offset dropped from the
        # set its owner's earlier record attached (with no record of its own).
        if etype == TYPE_DELETE and length == 0:
            if offset < previous or offset not in by_offset:
                fail(f"{name}: entry {index}, a dropped attached key, is not at a record after the one before")
            continue
        if offset <= previous:
            fail(f"{name}: entry {index} is not in increasing record offset")
        previous = offset
        if offset < segment.start or offset + length > segment.file_length:
            fail(f"{name}: entry {index} lies outside 32 ..< {segment.file_length}")
        record = by_offset.get(offset)
        if record is None:
            fail(f"{name}: entry {index} points at offset {offset}, where no applied record starts")
        if record.length != length:
            fail(f"{name}: entry {index} says length {length}, the record at {offset} is {record.length}")
        if record.type != etype:
            fail(f"{name}: entry {index} says type {etype}, the record at {offset} has {record.type}")
        if record.key != key:
            fail(f"{name}: entry {index} names another key than the record at {offset}")
        if not set(attached) <= set(record.attached):
            fail(f"{name}: entry {index} attaches a key its record at {offset} does not")
        listed.add(offset)
    max_sequence = max((record.sequence for record in segment.records), default=0)
    if head["max_sequence"] != max_sequence:
        fail(f"{name}: max sequence {head['max_sequence']}, the segment's highest is {max_sequence}")
    last_of_key = {}
    for record in segment.applied:
        last_of_key[record.key] = record
        if record.type == TYPE_DELETE and record.offset not in listed:
            fail(f"{name}: tombstone at {record.offset} is not listed")
    for record in last_of_key.values():
        if record.offset not in listed:
            fail(f"{name}: the segment's newest record of a key (at {record.offset}) is not listed")


# --- The store ------------------------------------------------------------------------------

def drop_attached(index, key):
    """Section 5.4: a put or delete of `key` first drops what its current record attaches."""
    current = index.get(key)
    if isinstance(current, Record):
        for attached in current.attached:
            if isinstance(index.get(attached), AttachedKey) and index[attached].owner is current:
                del index[attached]


def apply(index, records):
    for record in records:
        drop_attached(index, record.key)
        if record.type == TYPE_PUT:
            index[record.key] = record
            for attached in record.attached:
                drop_attached(index, attached)
                index[attached] = AttachedKey(record)
        else:
            index.pop(record.key, None)


class Dropped:
    """A hint's delete of length 0 (section 6): an attached key dropped with no record."""
    type, attached = TYPE_DELETE, []

    def __init__(self, key):
        self.key = key


def hint_records(entries, segment):
    """The records a hint lists, as open applies them: a put with the section the hint gives."""
    by_offset = {record.offset: record for record in segment.applied}
    records = []
    for etype, offset, length, key, attached in entries:
        if etype == TYPE_DELETE and length == 0:
            records.append(Dropped(key))
            continue
        record = by_offset[offset]
        if record.attached != attached:
            # A hint made from the index lists only the keys still attached then.
            copy = Record(record.offset, record.length, record.type, record.flags, record.sequence)
            copy.key, copy.value, copy.attached = record.key, record.value, attached
            record = copy
        records.append(record)
    return records


def read_manifest(directory, ring):
    """Section 6a: the manifest's plaintext, or None when the store has none. Under the current
    key, or (section 3a) the one manifest the key ring pins, under its older key."""
    path = os.path.join(directory, "MANIFEST")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:8] != MANIFEST_MAGIC:
        fail("MANIFEST: bad magic")
    try:
        plain = open_key_message(data[8:], ring["keys"][ring["current"]], "MANIFEST")
    except Invalid:
        pinned = ring["pinned"]
        if pinned is None or data[-32:] != pinned[1]:
            raise
        plain = open_key_message(data[8:], ring["keys"][pinned[0]], "MANIFEST (pinned)")
    version = u16(plain, 2) if len(plain) >= 4 else None
    epochs = version in (4, 5) and FORMAT_VERSION == 3
    if len(plain) < 36 or plain[0] != TAG_MANIFEST or plain[1] != 0 or (version != FORMAT_VERSION and not epochs):
        fail("MANIFEST: malformed (tag, reserved byte or version)")
    # Section 6a, version 5: the store's identity after the counts; it must be the header's.
    identity, first = (plain[36:52], 52) if version == 5 else (None, 36)
    if identity != STORE_IDENTITY:
        fail("MANIFEST: written by another store or copy (its identity is not the header's)")
    entry_length, pending_length = (28, 8) if epochs else (24, 4)
    count, retired_count, pending_count = u32(plain, 24), u32(plain, 28), u32(plain, 32)
    if len(plain) != first + entry_length * count + 4 * retired_count + pending_length * pending_count:
        fail("MANIFEST: the counts do not fill the plaintext exactly")
    entries = []
    for index in range(count):
        at = first + entry_length * index
        flags = u32(plain, at + 12)
        if flags & ~1:
            fail(f"MANIFEST: unknown flags in entry {index}")
        entries.append({"id": u32(plain, at), "order": (u32(plain, at + 4), u32(plain, at + 8)),
                        "active": bool(flags & 1), "length": u64(plain, at + 16),
                        "epoch": u32(plain, at + 24) if epochs else 0})
    at = first + entry_length * count
    retired = {u32(plain, at + 4 * index) for index in range(retired_count)}
    at += 4 * retired_count
    pending = {u32(plain, at + pending_length * index): (u32(plain, at + pending_length * index + 4) if epochs else 0)
               for index in range(pending_count)}
    return {"generation": u64(plain, 4), "last_sequence": u64(plain, 12), "next_id": u32(plain, 20),
            "segments": entries, "retired": retired, "pending": pending}


def check_manifest(directory, ring, segments, notes):
    """Section 6a, "What open checks": the segment files against the manifest. Returns the
    segments to read (retired ones are not read)."""
    manifest = read_manifest(directory, ring)
    if manifest is None:
        if segments:
            fail("MANIFEST: missing from a version 3 store with segments")
        return segments
    kept = [segment for segment in segments if segment.file_id not in manifest["retired"]]
    by_id = {segment.file_id: segment for segment in kept}
    for entry in manifest["segments"]:
        name = f"{entry['id']:08x}.seg"
        segment = by_id.get(entry["id"])
        if segment is None:
            fail(f"{name}: listed in the manifest but missing")
        if (segment.base, segment.sub) != entry["order"]:
            fail(f"{name}: its order differs from the manifest's")
        if segment.epoch != entry["epoch"]:
            fail(f"{name}: names key epoch {segment.epoch}, the manifest says {entry['epoch']}")
        length = min(segment.file_length, MAX_SEGMENT)
        if entry["active"] and length < entry["length"]:
            fail(f"{name}: {length} bytes, shorter than the {entry['length']} the manifest recorded")
        if not entry["active"] and length != entry["length"]:
            fail(f"{name}: sealed segment of {length} bytes, the manifest says {entry['length']}")
    listed = {entry["id"] for entry in manifest["segments"]}
    for segment in kept:
        if segment.file_id in listed:
            continue
        if segment.file_id in manifest["pending"]:
            if segment.epoch != manifest["pending"][segment.file_id]:
                fail(f"{segment.name}: a pending output under another key epoch than the manifest's")
        elif segment.file_id >= manifest["next_id"]:
            if segment.epoch != ring["current"]:
                fail(f"{segment.name}: newer than the manifest but not under the current key epoch")
        else:
            fail(f"{segment.name}: a segment the manifest does not list")
    if STORE_IDENTITY is not None:
        check_chain(manifest, kept)
    notes.append(f"manifest: generation {manifest['generation']}, {len(manifest['segments'])} segment(s) "
                 f"checked, {len(segments) - len(kept)} retired")
    return kept


def check_chain(manifest, kept):
    """Section 6b, version 5: the segments started after the manifest link, one to the next,
    from the newest ordinary segment it lists."""
    listed = {entry["id"] for entry in manifest["segments"]}
    skipped = manifest["retired"] | set(manifest["pending"])
    by_id = {segment.file_id: segment for segment in kept}
    unlisted = [s for s in kept if s.file_id not in listed and s.file_id not in skipped]
    for segment in unlisted:
        if segment.link["identity"] != STORE_IDENTITY:
            fail(f"{segment.name}: newer than the manifest but written by another store or copy")
        if segment.sub != 0:
            fail(f"{segment.name}: a compaction output the manifest neither lists nor names as pending")
    newer = sorted((s for s in unlisted if s.sub == 0 and s.file_id >= manifest["next_id"]),
                   key=lambda s: (s.base, s.sub, s.file_id))
    ordinary = [entry for entry in manifest["segments"] if entry["order"][1] == 0]
    newest = max(ordinary, key=lambda entry: entry["order"]) if ordinary else None

    def matches(previous, segment):
        length = min(segment.file_length, MAX_SEGMENT)
        return previous["length"] == length and previous["tail"] == segment.data[max(0, length - 32):length]

    before = None
    for segment in newer:
        previous = segment.link["previous"]
        if before is not None:
            if previous is None or previous["id"] != before.file_id or previous["order"] != (before.base, before.sub):
                fail(f"{segment.name}: does not follow {before.name} (a segment removed or reordered)")
            if not matches(previous, before):
                fail(f"{before.name}: not as it was when the next segment was started")
        elif previous is None:
            if newest is not None:
                fail(f"{segment.name}: the first segment newer than the manifest names no predecessor")
        elif previous["id"] >= manifest["next_id"]:
            fail(f"{segment.name}: follows {previous['id']:08x}, which is missing")
        elif previous["id"] in listed:
            if newest is None or newest["id"] != previous["id"] or newest["order"] != previous["order"]:
                fail(f"{segment.name}: does not follow the newest segment the manifest lists")
            if not matches(previous, by_id[previous["id"]]):
                fail(f"{by_id[previous['id']].name}: not as it was when the next segment was started")
        elif newest is not None and newest["order"] >= previous["order"]:
            fail(f"{segment.name}: follows a segment older than the newest the manifest lists")
        before = segment


def read_store(directory, password, check_hints):
    if not os.path.isdir(directory):
        fail(f"{directory}: not a directory")
    names = os.listdir(directory)
    lock_handle = None
    if "LOCK" in names:
        lock_handle = open(os.path.join(directory, "LOCK"), "rb")
        try:
            fcntl.flock(lock_handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                fail("LOCK: the store is open for writing by another process (locked)")
            raise
    ring = read_header(directory, password)
    notes = []
    segment_names, hint_names = [], []
    for name in sorted(names):
        if name in ("CASK", "LOCK") or name.endswith(".tmp") or (name == "MANIFEST" and FORMAT_VERSION >= 3):
            continue        # .tmp files are never part of the store (section 7)
        if name == "CHECKPOINT" and FORMAT_VERSION >= 3:
            continue        # section 18: a checkpoint only spares open work; the log says it all
        if SEGMENT_NAME.match(name):
            segment_names.append(name)
        elif HINT_NAME.match(name):
            hint_names.append(name)
        else:
            # Section 2: "It holds nothing but these names". GAP: open does not say what it
            # does with other names (the engine ignores them) or with upper-case hex digits
            # (the engine reads 0000000A.seg as segment 10 and writes 0000000a.hint for it).
            # This reader refuses both.
            fail(f"{name}: unexpected file in the store directory")
    segments = []
    for name in segment_names:
        file_id = int(name[:8], 16)
        with open(os.path.join(directory, name), "rb") as handle:
            data = handle.read()
        base, sub, epoch = read_segment_header(name, file_id, data)
        if epoch not in ring["keys"]:
            fail(f"{name}: sealed under key epoch {epoch}, which the header does not hold")
        link = read_segment_link(name, data, ring["keys"][epoch]) if STORE_IDENTITY is not None else None
        segments.append(Segment(name, file_id, data, base, sub, epoch, ring["keys"][epoch], link))
    if FORMAT_VERSION >= 3:
        segments = check_manifest(directory, ring, segments, notes)
    segments.sort(key=lambda segment: (segment.base, segment.sub))
    for before, after in zip(segments, segments[1:]):
        if (before.base, before.sub) == (after.base, after.sub):
            # GAP: section 8 gives no rule for two segments with the same order (the engine
            # accepted both; in the one case tried, the larger file id won).
            fail(f"{before.name} and {after.name} have the same order ({before.base:08x}, {before.sub})")
    index = {}
    for position, segment in enumerate(segments):
        notes += scan_segment(segment, position == len(segments) - 1)
        apply(index, segment.applied)
    if check_hints:
        by_id = {segment.file_id: segment for segment in segments}
        hinted = {}
        for name in hint_names:
            segment = by_id.get(int(name[:8], 16))
            if segment is None:
                fail(f"{name}: orphan hint (no segment of that id)")
            head, entries = read_hint(directory, name, segment.keys)
            check_hint(name, head, entries, segment)
            hinted[segment.file_id] = entries
        # Section 6: open applies a hint's entries in order, as it would the records. The
        # index built from the hints (where there are any) must be the one built by scanning.
        hint_index = {}
        for segment in segments:
            if segment.file_id in hinted:
                apply(hint_index, hint_records(hinted[segment.file_id], segment))
            else:
                apply(hint_index, segment.applied)
        if {k: r.offset for k, r in hint_index.items()} != {k: r.offset for k, r in index.items()}:
            fail("hints: the index built from the hints differs from the one built by scanning")
        notes.append(f"hints: {len(hinted)} hint file(s) checked, {len(segments) - len(hinted)} segment(s) without one")
    if lock_handle is not None:
        lock_handle.close()
    return index, notes


def main(argv):
    arguments = argv[1:]
    check_hints = "--check-hints" in arguments
    arguments = [argument for argument in arguments if argument != "--check-hints"]
    if len(arguments) != 1 or arguments[0].startswith("-"):
        print("usage: CASK_PASSWORD=... read-store.py [--check-hints] STORE_DIR", file=sys.stderr)
        return 2
    password = os.environ.get("CASK_PASSWORD")
    if not password:
        print("read-store: CASK_PASSWORD is not set (or empty)", file=sys.stderr)
        return 2
    try:
        index, notes = read_store(arguments[0], password.encode("utf-8"), check_hints)
    except Invalid as error:
        print(f"read-store: invalid: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"read-store: {error}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"read-store: note: {note}", file=sys.stderr)
    out = sys.stdout
    for key in sorted(index):
        record = index[key]
        out.write(json.dumps({"key": key.decode("utf-8"), "value": base64.b64encode(record.value).decode("ascii")})
                  + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
