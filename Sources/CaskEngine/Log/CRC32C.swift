internal import CCRC32C

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the record checksum.
///
/// Computed with the processor's `crc32` instruction where it has one (SSE4.2 on x86_64,
/// asked once through cpuid), otherwise eight bytes at a time with eight lookup tables
/// ("slicing-by-8"). Both give the same results (CRC32CTests compares them on every length).
public enum CRC32C {
  /// Whether `checksum` uses the processor's instruction.
  static let usesHardware = cask_crc32c_hardware_available() == 1

  private static let tables: [[UInt32]] = {
    var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
    for byte in 0..<256 {
      var crc = UInt32(byte)
      for _ in 0..<8 {
        crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
      }
      tables[0][byte] = crc
    }
    for byte in 0..<256 {
      var crc = tables[0][byte]
      for table in 1..<8 {
        crc = tables[0][Int(crc & 0xFF)] ^ (crc >> 8)
        tables[table][byte] = crc
      }
    }
    return tables
  }()

  private static let flat: [UInt32] = tables.flatMap { $0 }

  /// The checksum of `bytes`, continuing from `crc` (0 to start).
  public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    guard usesHardware else { return softwareChecksum(bytes, continuing: crc) }
    guard let base = bytes.baseAddress else { return crc }
    return ~cask_crc32c_hardware(~crc, base, bytes.count)
  }

  /// `checksum` from the lookup tables alone, whatever the processor.
  static func softwareChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    var state = ~crc
    guard var pointer = bytes.baseAddress else { return crc }
    var remaining = bytes.count
    flat.withUnsafeBufferPointer { table in
      while remaining >= 8 {
        let word = UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
        let low = UInt32(truncatingIfNeeded: word) ^ state
        let high = UInt32(truncatingIfNeeded: word >> 32)
        state =
          table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
          ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
          ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
          ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[0 * 256 + Int(high >> 24)]
        pointer += 8
        remaining -= 8
      }
      while remaining > 0 {
        state = table[Int((state ^ UInt32(pointer.load(as: UInt8.self))) & 0xFF)] ^ (state >> 8)
        pointer += 1
        remaining -= 1
      }
    }
    return ~state
  }

  /// The checksum of any contiguous bytes.
  public static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
    if let result = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) {
      return result
    }
    let copy = Array(bytes)
    return copy.withUnsafeBytes { checksum($0) }
  }
}
