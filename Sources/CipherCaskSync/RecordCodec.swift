import Foundation
import RNCryptorCodec

/// Turns objects into Kinto records and back.
///
/// - Plain mode: `{"id": <record id>, "localID": <id>, "object": <the object's JSON>}`. The
///   record id is the local id when Kinto accepts it as one (`[A-Za-z0-9][A-Za-z0-9_-]*`, not
///   starting with `x--`), else `x--` and the id's UTF-8 bytes in hex.
/// - End-to-end mode: `{"id": <64 hex digits of HMAC-SHA256(id)>, "ciphertext": <base64 of an
///   RNCryptor v3 message>}`, whose plaintext is the plain record's `localID` and `object`.
struct RecordCodec<T: Codable & Sendable>: Sendable {
  let keys: EndToEndKeys?

  func recordID(for id: String) throws -> String {
    if let keys { return try keys.recordID(for: id) }
    return Self.plainRecordID(for: id)
  }

  static func plainRecordID(for id: String) -> String {
    let bytes = Array(id.utf8)
    let fits =
      !bytes.isEmpty && bytes.count <= 100 && !id.hasPrefix("x--")
      && bytes.enumerated().allSatisfy { index, byte in
        let alphanumeric = (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
        return alphanumeric || (index > 0 && (byte == 45 || byte == 95))
      }
    return fits ? id : "x--" + bytes.map { String(format: "%02x", $0) }.joined()
  }

  /// The fields of the record for `object` with local id `id`, without the record's id: a
  /// write names the record in its path, and Kinto takes the id from there (sending it in the
  /// body too would cost 64 bytes a record end to end).
  func fields(for object: T, id: String) throws -> [String: Any] {
    let plain: [String: Any] = ["localID": id, "object": try Self.json(of: object)]
    guard let keys else { return plain }
    let payload = try JSONSerialization.data(withJSONObject: plain, options: [.sortedKeys])
    let sealed = try RNCryptor.encrypt(payload, keys: keys.message)
    return ["ciphertext": sealed.base64EncodedString()]
  }

  /// The local id and object of a record (not a tombstone); checks that the record id is the
  /// one its content names, so a server cannot move an object under another id.
  ///
  /// - Throws: `SyncError.decoding`, `.wrongPassphrase` (a record that does not open).
  func decode(_ record: [String: Any]) throws -> (id: String, object: T) {
    var plain = record
    if let keys {
      guard let text = record["ciphertext"] as? String, let sealed = Data(base64Encoded: text) else {
        throw SyncError.decoding("a record has no end-to-end ciphertext")
      }
      let payload: Data
      do {
        payload = try RNCryptor.decrypt(sealed, keys: keys.message)
      } catch {
        throw SyncError.wrongPassphrase
      }
      guard let opened = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else {
        throw SyncError.decoding("a record's sealed payload is not a JSON object")
      }
      plain = opened
    }
    guard let id = plain["localID"] as? String, let body = plain["object"] else {
      throw SyncError.decoding("a record has no localID and object (written by another client?)")
    }
    guard try recordID(for: id) == record["id"] as? String else {
      throw SyncError.decoding("a record's id does not match the object it holds")
    }
    do {
      let data = try JSONSerialization.data(withJSONObject: body, options: [.fragmentsAllowed])
      return (id, try JSONDecoder().decode(T.self, from: data))
    } catch {
      throw SyncError.decoding("a record's object does not decode")
    }
  }

  /// The object's JSON as a Foundation value.
  static func json(of object: T) throws -> Any {
    do {
      return try JSONSerialization.jsonObject(with: JSONEncoder().encode(object), options: [.fragmentsAllowed])
    } catch {
      throw SyncError.decoding("the object does not encode as JSON")
    }
  }

  /// JSON with sorted keys: two versions with this equal are the same object.
  static func canonical(_ object: T?) -> Data? {
    guard let object else { return nil }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return try? encoder.encode(object)
  }
}
