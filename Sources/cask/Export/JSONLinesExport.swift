import CaskCLIKit
import CipherCask
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `cask export STORE DEST --format jsonl`: one JSON object per line, decrypted, to standard
/// output (`-`) or to a new file.
///
/// Each line is `{"key": K, "collection": C, "id": I, "value": V}` (`collection` and `id` for
/// keys of a collection). A value that is JSON with no line break in it is `value`, its bytes
/// as stored; any other value (binary, or JSON spread over lines) is `base64`, so every value
/// comes back byte for byte.
///
/// With `--collection`, each line is one of the collection's objects itself, its stored bytes
/// (line breaks, which JSON allows only as whitespace, become spaces), so that
/// `cask import ... --collection NAME --id-key KEY` reads the lines back into the same objects.
enum JSONLinesExport {
  /// Writes the lines for `keys`; returns how many values were written and which were skipped.
  ///
  /// - Parameter collection: the collection whose objects `keys` are, to write the objects
  ///   alone; `nil` for the `{"key": ...}` lines.
  static func run(
    _ keys: [String], of store: CaskStore, to destination: String, collection: String? = nil,
    skippingDamaged: Bool
  ) throws -> (count: Int, skipped: [DamageList.Value]) {
    let output = try Output(destination)
    var skipped: [DamageList.Value] = []
    var count = 0
    do {
      for key in keys {
        let value: Data?
        do {
          value = try store.get(key)
        } catch CaskError.corrupt(let file, let offset, let reason) where skippingDamaged {
          skipped.append(DamageList.Value(file: (file as NSString).lastPathComponent, offset: offset, reason: reason))
          continue
        }
        guard let value else { continue }
        try output.write(collection.map { try objectLine(value, of: $0) } ?? line(key, value))
        count += 1
      }
      output.close()
    } catch {
      output.abandon()
      throw error
    }
    return (count, skipped)
  }

  /// One line, with its newline.
  static func line(_ key: String, _ value: Data) throws -> Data {
    var line = Data(#"{"key":"#.utf8) + (try string(key))
    if let separator = key.utf8.firstIndex(of: 0) {
      line += Data(#","collection":"#.utf8) + (try string(String(key[..<separator])))
      line += Data(#","id":"#.utf8) + (try string(String(key[key.index(after: separator)...])))
    }
    let isJSON = (try? JSONSerialization.jsonObject(with: value, options: [.fragmentsAllowed])) != nil
    if isJSON && !value.contains(0x0A) && !value.contains(0x0D) {
      line += Data(#","value":"#.utf8) + value
    } else {
      line += Data(#","base64":""#.utf8) + Data(value.base64EncodedString().utf8) + Data("\"".utf8)
    }
    return line + Data("}\n".utf8)
  }

  /// One object of `collection` as a line, with its newline: a JSON object as stored, or the
  /// JSON text of an object `BinaryCaskCoder` stored (Docs/FORMAT.md, section 16.3).
  ///
  /// - Throws: `CLIError.failure` for a value that is neither (or a binary object holding an
  ///   infinity or a NaN, which JSON cannot hold), naming the collection but not the id.
  static func objectLine(_ value: Data, of collection: String) throws -> Data {
    let value = try jsonObject(value, of: collection)
    var line = value
    // Outside strings a line break is whitespace; inside one, JSON allows it only escaped.
    if line.contains(0x0A) || line.contains(0x0D) {
      line = Data(line.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 })
    }
    return line + Data("\n".utf8)
  }

  /// One value as JSON object text and a newline, for `cask get --json`.
  ///
  /// - Throws: `CLIError.failure` for a value that is not an object (of either coder), naming
  ///   neither the key nor the value.
  static func objectText(_ value: Data) throws -> Data {
    guard let text = try jsonObject(value, describedAs: "the value") else {
      throw CLIError.failure("the value is not an object (neither a JSON object nor a binary one); omit --json")
    }
    return text + Data("\n".utf8)
  }

  /// `value` as JSON object text: itself when it is one, its JSON text when it is a binary object.
  private static func jsonObject(_ value: Data, of collection: String) throws -> Data {
    let name = MessageText.quoted(collection)
    guard let text = try jsonObject(value, describedAs: "collection \(name)") else {
      throw CLIError.failure(
        "collection \(name) holds a value that is not a JSON object, which a JSON Lines export of the "
          + "collection cannot hold; export the store without --collection (its lines keep every value, "
          + "in base64 if need be), or export the objects with the library's exportJSON")
    }
    return text
  }

  /// `value` as JSON object text, or `nil` when it is neither a JSON object nor a binary one.
  /// Errors start with `subject` ("collection 'events'").
  private static func jsonObject(_ value: Data, describedAs subject: String) throws -> Data? {
    if value.first == 0xC1 {
      do {
        return try BinaryJSONText.json(fromBinaryObject: value)
      } catch let error as BinaryJSONText.Unrepresentable {
        throw CLIError.failure("\(subject) holds an object that JSON cannot hold: \(error)")
      } catch {
        throw CLIError.failure("\(subject) holds a damaged binary object")
      }
    }
    return (try? JSONSerialization.jsonObject(with: value, options: [])) is [String: Any] ? value : nil
  }

  private static func string(_ text: String) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.withoutEscapingSlashes]
    return try encoder.encode(text)
  }

  /// Standard output, or a new file (mode 0600) that a failure removes.
  private final class Output {
    let descriptor: Int32
    let path: String?

    init(_ destination: String) throws {
      guard destination != "-" else {
        (descriptor, path) = (STDOUT_FILENO, nil)
        return
      }
      let opened = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      guard opened >= 0 else {
        throw CLIError.failure("cannot create '\(destination)': \(String(cString: strerror(errno)))")
      }
      (descriptor, path) = (opened, destination)
    }

    func write(_ data: Data) throws {
      guard let path else {
        StandardStream.output.write(data)
        return
      }
      try data.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
          let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
          if written < 0 && errno == EINTR { continue }
          guard written > 0 else {
            throw CLIError.failure("cannot write '\(path)': \(String(cString: strerror(errno)))")
          }
          offset += written
        }
      }
    }

    func close() { if path != nil { Glibc.close(descriptor) } }

    /// Closes and removes a file that was being written: a part of an export is no use.
    func abandon() {
      guard let path else { return }
      Glibc.close(descriptor)
      unlink(path)
    }
  }
}
