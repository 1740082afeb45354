//! The backup walk, stream and import: round trips byte by byte, damaged and cut streams are
//! refused, and a walk beside a writer copies an unbroken prefix.

use super::*;
use crate::store::SledStore;

fn sample_store() -> SledStore {
    let store = SledStore::temporary().expect("store");
    store.put(Table::Meta, b"audit.head", b"{\"seq\":3}").expect("put");
    for seq in 1..=3u64 {
        store.put(Table::Audit, &seq.to_be_bytes(), format!("record {seq}").as_bytes()).expect("put");
    }
    store.put(Table::Sessions, b"session", &[0, 1, 2, 255]).expect("put");
    store.put(Table::Inventory, b"", b"an empty key").expect("put");
    store.put(Table::PolicyVersions, &[7; 40], &vec![b'x'; 5000]).expect("put");
    store
}

fn stream_of(store: &dyn Store) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    walk(store, &mut |item| {
        encode(&item, &mut bytes);
        Ok(())
    })
    .expect("walk");
    bytes
}

fn everything(store: &dyn Store) -> Vec<(Table, Vec<Entry>)> {
    Table::ALL.iter().map(|table| (*table, store.range(*table, b"", usize::MAX).expect("range"))).collect()
}

fn import(bytes: &[u8], piece: usize) -> Result<(SledStore, Vec<(Table, u64)>), BackupError> {
    let target = SledStore::temporary().expect("store");
    let mut importer = Importer::new(&target);
    let mut decoder = Decoder::new();
    for chunk in bytes.chunks(piece.max(1)) {
        decoder.push(chunk, &mut |item| importer.accept(item))?;
    }
    decoder.finish()?;
    let counts = importer.finish()?.into_iter().map(|tally| (tally.table, tally.records)).collect();
    Ok((target, counts))
}

#[test]
fn every_table_is_walked() {
    // No wildcard: a new table does not compile until it has a place here, and then `ALL` must
    // list it at that place.
    fn position(table: Table) -> usize {
        match table {
            Table::Meta => 0,
            Table::Audit => 1,
            Table::AuditContent => 2,
            Table::Sessions => 3,
            Table::PendingLogins => 4,
            Table::Handoffs => 5,
            Table::Inventory => 6,
            Table::Approvals => 7,
            Table::PolicyVersions => 8,
            Table::AgentTurns => 9,
            Table::ToolResults => 10,
            Table::GatedForms => 11,
            Table::Outcomes => 12,
        }
    }
    for (index, table) in Table::ALL.iter().enumerate() {
        assert_eq!(position(*table), index, "{table:?}");
        assert_eq!(Table::from_name(table.name()), Some(*table));
    }
    assert_eq!(Table::ALL.len(), 13, "a table is missing from Table::ALL");
}

#[test]
fn a_backup_round_trips_in_pieces_of_any_size() {
    let source = sample_store();
    let bytes = stream_of(&source);
    for piece in [1, 2, 7, 4096, bytes.len()] {
        let (target, counts) = import(&bytes, piece).expect("import");
        assert_eq!(everything(&target), everything(&source), "pieces of {piece} bytes");
        let total: u64 = counts.iter().map(|(_, count)| count).sum();
        assert_eq!(total, 7);
        assert_eq!(counts[0], (Table::Meta, 1), "Meta is walked first");
        assert_eq!(counts[1], (Table::Audit, 3), "Audit right after Meta");
    }
}

#[test]
fn cut_damaged_and_foreign_streams_are_refused() {
    let bytes = stream_of(&sample_store());
    // Cut anywhere before the end marker is complete: incomplete, never a partial success.
    for cut in [MAGIC.len(), MAGIC.len() + 5, bytes.len() - 1] {
        assert!(matches!(import(&bytes[..cut], 3), Err(BackupError::Incomplete(_))), "cut at {cut}");
    }
    assert!(matches!(import(b"PK\x03\x04 a zip file", 4), Err(BackupError::NotABackup)));
    assert!(matches!(import(b"", 4), Err(BackupError::NotABackup)));

    let mut trailing = bytes.clone();
    trailing.extend_from_slice(b"R");
    assert!(matches!(import(&trailing, 64), Err(BackupError::Damaged(_))));

    // An end marker that counts one record more than the stream carried.
    let mut miscounted = bytes.clone();
    let count_at = miscounted.len() - 8;
    miscounted[count_at + 7] += 1;
    assert!(matches!(import(&miscounted, 64), Err(BackupError::Damaged(_))));

    let mut huge = MAGIC.to_vec();
    encode(&Item::Table(Table::Audit), &mut huge);
    huge.extend_from_slice(&[b'R', 0xff, 0xff, 0xff, 0xff]);
    assert!(matches!(import(&huge, 64), Err(BackupError::Damaged(_))));

    let mut unknown = MAGIC.to_vec();
    unknown.extend_from_slice(&[b'T', 0, 5]);
    unknown.extend_from_slice(b"bogus");
    assert!(matches!(import(&unknown, 64), Err(BackupError::UnknownTable(name)) if name == "bogus"));

    let mut orphan = MAGIC.to_vec();
    encode(&Item::Record((b"k".to_vec(), b"v".to_vec())), &mut orphan);
    encode(&Item::End { records: 1 }, &mut orphan);
    assert!(matches!(import(&orphan, 64), Err(BackupError::Damaged(_))));
}

#[test]
fn a_walk_beside_an_appending_writer_copies_an_unbroken_prefix() {
    let source = std::sync::Arc::new(SledStore::temporary().expect("store"));
    let writer = {
        let source = source.clone();
        std::thread::spawn(move || {
            for seq in 1..=20_000u64 {
                source.put(Table::Audit, &seq.to_be_bytes(), b"record").expect("append");
            }
        })
    };
    let mut copies = Vec::new();
    while !writer.is_finished() {
        let (target, _) = import(&stream_of(source.as_ref()), 1 << 16).expect("import");
        copies.push(target.range(Table::Audit, b"", usize::MAX).expect("range"));
    }
    writer.join().expect("writer");
    copies.push(source.range(Table::Audit, b"", usize::MAX).expect("range"));
    for copy in &copies {
        for (index, (key, _)) in copy.iter().enumerate() {
            assert_eq!(key.as_slice(), (index as u64 + 1).to_be_bytes(), "a gap in a copy of {}", copy.len());
        }
    }
    assert_eq!(copies.last().map(Vec::len), Some(20_000));
}
