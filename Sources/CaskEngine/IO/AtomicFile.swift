import Foundation

/// Writes whole small files (the header, hint files) so that a crash leaves either the old
/// file or the new one: temporary file, sync, rename over the final name, then optionally a
/// sync of the directory that makes the rename durable.
enum AtomicFile {
  static func write(
    _ bytes: [UInt8], to finalPath: String, fileSystem: any FileSystem, syncingDirectory directory: String?
  ) throws {
    let temporary = finalPath + CaskFormat.temporarySuffix
    try fileSystem.removeFile(temporary)
    let file = try fileSystem.open(temporary, mode: .createNew)
    defer { file.close() }
    do {
      try bytes.withUnsafeBytes { try file.write($0, at: 0) }
      try file.sync()
      try fileSystem.rename(temporary, to: finalPath)
      if let directory { try fileSystem.syncDirectory(directory) }
    } catch {
      try? fileSystem.removeFile(temporary)
      throw error
    }
  }
}
