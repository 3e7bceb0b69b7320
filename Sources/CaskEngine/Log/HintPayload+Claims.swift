import RNCryptorCodec

/// What a hint's head claims before the hint is authenticated (Docs/FORMAT.md, section 6):
/// only for sizing the index before the hints are read for real.
extension HintPayload {
  /// The bytes at the start of a hint file that `claimedCount` reads: the magic, the
  /// message's header and two blocks of ciphertext.
  static let headLength = CaskFormat.hintMagic.count + RNCryptor.Format.keyHeaderLength + 32

  /// The most bytes at the start of a hint file that `claimedSizes` reads: the magic, the
  /// message's header and the ciphertext of the payload's first `hintSizingLength` bytes.
  static let sizingHeadLength =
    CaskFormat.hintMagic.count + RNCryptor.Format.keyHeaderLength + CaskFormat.hintSizingLength

  /// What a hint's head claims it adds to each table of the index, decrypted from its first
  /// bytes (up to `sizingHeadLength`) **without authenticating them**: for a grouped hint its
  /// group section (as much of it as `head` holds), for an earlier one `nil`. Every count is
  /// bounded, in all, by the entries a file of `fileLength` bytes can hold: a forged count
  /// costs at most memory in proportion to the file's size, and never a wrong answer (each
  /// hint is authenticated before any of its entries is used).
  static func claimedSizes(head: UnsafeRawBufferPointer, fileLength: UInt64, cipher: RecordCipher) -> HintSizes? {
    guard magic(of: head) == true, let bound = claimedCount(head: head, fileLength: fileLength, cipher: cipher)
    else { return nil }
    let magicLength = CaskFormat.hintMagic.count
    let start = magicLength + RNCryptor.Format.keyHeaderLength
    // Whole blocks of ciphertext, never into the HMAC at the end of the file.
    let ciphertext = min(
      head.count - start, Int(clamping: fileLength) - start - RNCryptor.Format.hmacLength,
      CaskFormat.hintSizingLength)
    let blocks = ciphertext / RNCryptor.Format.blockLength * RNCryptor.Format.blockLength
    guard blocks > 0 else { return nil }
    return withUnsafeTemporaryAllocation(byteCount: blocks, alignment: 16) { plaintext -> HintSizes? in
      guard
        (try? RNCryptor.unauthenticatedPrefix(
          of: UnsafeRawBufferPointer(rebasing: head[magicLength...]), keys: cipher.keys, into: plaintext)) == true
      else { return nil }
      var reader = ByteReader(
        UnsafeRawBufferPointer(plaintext), offset: cipher.tagLength + CaskFormat.hintPayloadHeaderLength)
      return HintSizes.readSection(from: &reader, bound: bound, complete: false)
    }
  }

  /// The entry count a hint file's header claims, decrypted from its first `headLength` bytes
  /// **without authenticating them**, and never more than a file of `fileLength` bytes can
  /// hold; `nil` when the head is not a hint's. Only for sizing the index before the hints are
  /// read for real (each is then authenticated before any of its entries is used): a forged
  /// count costs at most memory in proportion to the file's size.
  static func claimedCount(head: UnsafeRawBufferPointer, fileLength: UInt64, cipher: RecordCipher) -> Int? {
    let magicLength = CaskFormat.hintMagic.count
    guard head.count >= headLength, magic(of: head) != nil else { return nil }
    var plaintext: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    let decrypted = withUnsafeMutableBytes(of: &plaintext) { buffer in
      (try? RNCryptor.unauthenticatedPrefix(
        of: UnsafeRawBufferPointer(rebasing: head[magicLength...]), keys: cipher.keys, into: buffer)) == true
    }
    guard decrypted else { return nil }
    let count = withUnsafeBytes(of: &plaintext) {
      UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 24 + cipher.tagLength, as: UInt32.self))
    }
    let overhead = UInt64(
      magicLength + RNCryptor.Format.keyHeaderLength + RNCryptor.Format.hmacLength + CaskFormat.hintPayloadHeaderLength)
    let room = fileLength > overhead ? (fileLength - overhead) / UInt64(CaskFormat.hintEntryFixedLength + 1) : 0
    return Int(min(UInt64(count), room))
  }
}
