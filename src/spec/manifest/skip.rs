//! Running precomputed skip programs: how to step over one value of a writer-schema node,
//! compiled once per parsed schema by `avro::compile_all` (`Schema::parse`; skipping a manifest entry's keys and statistics through
//! the generic, recursive [`Cursor::skip_value`] was the largest cost of reading references).
//!
//! A program is a flat list of primitive steps: records are inlined field by field, `null`
//! takes no step, consecutive integers (or byte strings) are one step, and only unions, arrays
//! and maps nest: a manifest entry's statistics are a handful of steps. Running a program reads exactly the
//! bytes [`Cursor::skip_value`] reads and fails with the same errors at the same place; a node
//! whose program would nest deeply or grow large (recursive or very wide schemas) gets none and
//! is skipped by [`Cursor::skip_value`] as before.

use super::avro::{Cursor, DecodeError, DecodeResult, SkipOp};

impl Cursor<'_> {
    /// Skips one value by its compiled program (see the module documentation).
    pub(crate) fn skip_program(&mut self, ops: &[SkipOp]) -> DecodeResult<()> {
        for op in ops {
            match op {
                SkipOp::Varints(n) => {
                    for _ in 0..*n {
                        self.read_long()?;
                    }
                }
                SkipOp::Bytes(n) => {
                    for _ in 0..*n {
                        let len = self.read_len()?;
                        self.skip(len)?;
                    }
                }
                SkipOp::Fixed(n) => self.skip(*n)?,
                SkipOp::Union(branches) => {
                    let idx = self.read_long()?;
                    let b = usize::try_from(idx)
                        .ok()
                        .and_then(|i| branches.get(i))
                        .ok_or_else(|| {
                            DecodeError::malformed(format!("union branch {idx} out of range"))
                        })?;
                    // Most branches are `null` or one number: no call for them.
                    match &**b {
                        [] => {}
                        [SkipOp::Varints(1)] => {
                            self.read_long()?;
                        }
                        _ => self.skip_program(b)?,
                    }
                }
                SkipOp::Array { item, empty } => self.skip_blocks(item, Some(*empty))?,
                SkipOp::Map(value) => self.skip_blocks(value, None)?,
            }
        }
        Ok(())
    }

    /// The blocks of an array (`empty_items` = whether an item can take no bytes) or of a map
    /// (`None`: each item is a string key and a value).
    fn skip_blocks(&mut self, item: &[SkipOp], empty_items: Option<bool>) -> DecodeResult<()> {
        self.skip_blocks_by(empty_items.is_none(), empty_items.unwrap_or(false), |c| {
            c.skip_program(item)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::avro::{append_program, compile_all, Schema};
    use super::*;

    /// Every value of every node skipped by program and by the generic walk: the same bytes
    /// read, the same errors (on every truncation and on corrupted bytes).
    #[test]
    fn programs_skip_exactly_what_the_generic_walk_skips() {
        let json = br#"{"type":"record","name":"r","fields":[
            {"name":"a","type":"int"},
            {"name":"b","type":["null","string"]},
            {"name":"c","type":{"type":"array","items":["null","long"]}},
            {"name":"d","type":{"type":"map","values":"double"}},
            {"name":"e","type":{"type":"fixed","name":"f4","size":4}},
            {"name":"f","type":{"type":"record","name":"in","fields":[
                {"name":"x","type":"boolean"},{"name":"y","type":"float"},
                {"name":"z","type":{"type":"array","items":"null"}},
                {"name":"w","type":{"type":"enum","name":"en","symbols":["A","B"]}}]}},
            {"name":"g","type":"bytes"}]}"#;
        let s = Schema::parse(json).unwrap();
        let programs = compile_all(&s);
        let root = programs[s.root].as_deref().unwrap();
        assert!(matches!(root.first(), Some(SkipOp::Varints(1))));
        // a=3, b=branch1 "hi", c=[null, 5] in one block, then a negative-count block with
        // its size, d={"k":1.0}, e=4 bytes, f={true, 1.0f, [null x2], B}, g="xyz".
        let mut data = vec![6, 2, 4, b'h', b'i', 4, 0, 2, 10];
        data.extend_from_slice(&[1, 4, 2, 0, 0]);
        data.extend_from_slice(&[2, 2, b'k']);
        data.extend_from_slice(&1.0f64.to_le_bytes());
        data.extend_from_slice(&[0, 1, 2, 3, 4, 1]);
        data.extend_from_slice(&1.0f32.to_le_bytes());
        data.extend_from_slice(&[4, 0, 2, 6, b'x', b'y', b'z']);
        let mut a = Cursor::new(&data);
        a.skip_value(&s, s.root, 0).unwrap();
        assert_eq!(a.remaining(), 0);
        let mut b = Cursor::new(&data);
        b.skip_program(root).unwrap();
        assert_eq!(b.remaining(), 0);
        assert_eq!(a.empty_items_left(), b.empty_items_left());
        for cut in 0..data.len() {
            let g = Cursor::new(&data[..cut]).skip_value(&s, s.root, 0);
            let p = Cursor::new(&data[..cut]).skip_program(root);
            assert_eq!(g, p, "cut at {cut}");
        }
        for at in 0..data.len() {
            for v in [0x00u8, 0x7f, 0x80, 0xff, 0x41] {
                let mut bad = data.clone();
                bad[at] = v;
                let mut g = Cursor::new(&bad);
                let mut p = Cursor::new(&bad);
                let rg = g.skip_value(&s, s.root, 0);
                let rp = p.skip_program(root);
                assert_eq!(rg, rp, "byte {at} = {v:#x}");
                assert_eq!(g.position(), p.position(), "byte {at} = {v:#x}");
            }
        }
    }

    #[test]
    fn consecutive_numbers_and_strings_are_one_step() {
        let json = br#"{"type":"record","name":"r","fields":[
            {"name":"a","type":"long"},{"name":"b","type":"int"},
            {"name":"c","type":"bytes"},{"name":"d","type":"string"},
            {"name":"e","type":"null"},{"name":"f","type":"bytes"},{"name":"g","type":"int"}]}"#;
        let s = Schema::parse(json).unwrap();
        let root = compile_all(&s)[s.root].clone().unwrap();
        assert_eq!(
            &*root,
            &[SkipOp::Varints(2), SkipOp::Bytes(3), SkipOp::Varints(1)]
        );
        let mut run = vec![SkipOp::Bytes(1)];
        append_program(&mut run, &root);
        assert_eq!(
            run,
            vec![
                SkipOp::Bytes(1),
                SkipOp::Varints(2),
                SkipOp::Bytes(3),
                SkipOp::Varints(1)
            ]
        );
        append_program(&mut run, &[SkipOp::Varints(4), SkipOp::Fixed(2)]);
        assert_eq!(run[3..], [SkipOp::Varints(5), SkipOp::Fixed(2)]);
    }

    #[test]
    fn recursive_schemas_get_no_program() {
        let json = br#"{"type":"record","name":"n","fields":[
            {"name":"next","type":["null","n"]}]}"#;
        let s = Schema::parse(json).unwrap();
        assert!(compile_all(&s)[s.root].is_none());
    }
}
