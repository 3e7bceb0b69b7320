import CaskEngine
import Foundation

extension FileDamage {
  /// Writes `version` into the version field of the store header `CASK` in `store` and
  /// recomputes the header's CRC, as someone who holds the files but not the password can
  /// (before format 5 nothing else vouches for the field).
  public static func setHeaderVersion(_ version: UInt16, ofStore store: String) throws {
    let path = "\(store)/\(CaskFormat.headerFileName)"
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let versionOffset = CaskFormat.headerMagic.count
    bytes[versionOffset] = UInt8(version & 0xff)
    bytes[versionOffset + 1] = UInt8(version >> 8)
    // The CRC is the header's last field and covers every byte before it.
    let crc = CRC32C.checksum(bytes[0..<(bytes.count - 4)])
    for index in 0..<4 { bytes[bytes.count - 4 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }
}
