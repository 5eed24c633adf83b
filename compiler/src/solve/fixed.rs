//! Fixed dofs: the mask of the dofs a fix spec (`--fix`, the solve block's `fix`) holds in
//! place, from vertex ids, the mesh boundary, or a file of ids.

use crate::energy::MeshEnergy;
use crate::front::solve::FixSpec;

/// Why `value`, written with digits, signs, dots, commas and spaces only (a list of ids, not a
/// file name), is not a list of vertex ids: its first entry that is empty or not a
/// non-negative integer. `None` for anything else.
fn id_list_problem(value: &str) -> Option<String> {
    let id_like = |c: char| c.is_ascii_digit() || matches!(c, ',' | '-' | '+' | '.' | ' ');
    if value.is_empty() || !value.chars().all(id_like) {
        return None;
    }
    value.split(',').map(str::trim).find_map(|t| match t {
        "" => Some("an empty entry in the list of vertex ids (write ids separated by single commas)".to_string()),
        _ if t.parse::<usize>().is_err() => Some(format!("`{t}` is not a vertex id (a non-negative integer)")),
        _ => None,
    })
}

/// The fixed-dof mask of a fix spec (every dof of each fixed vertex); errors name the
/// setting as written (`--fix VALUE`, or the solve block's `fix = VALUE` when `from_flag` is
/// false), and an id read from a file its line. Ids are in the file's vertex numbering (the
/// energy may be bound renumbered). A file of ids separates them by whitespace, commas or
/// lines; `#` starts a comment that runs to the end of its line. What fixes nothing —
/// `boundary` on a mesh without boundary, a file without ids — does so with a warning,
/// passed to `warn`; a program without dofs on vertices cannot have vertices fixed: an error
/// for the flag, a warning for the solve block's setting (which is then dropped, as other
/// settings the solve ignores are).
pub fn fixed_mask(
    me: &MeshEnergy,
    spec: &FixSpec,
    from_flag: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<Vec<bool>, String> {
    let origin = |value: &str, quoted: bool| match (from_flag, quoted) {
        (true, _) => format!("--fix {value}"),
        (false, true) => format!("the solve block's `fix = \"{value}\"`"),
        (false, false) => format!("the solve block's `fix = {value}`"),
    };
    let setting = match spec {
        FixSpec::File(path) => origin(path, true),
        FixSpec::Boundary => origin("boundary", false),
        _ if from_flag => "--fix".to_string(),
        _ => "the solve block's `fix`".to_string(),
    };
    let mut mask = vec![false; me.ndofs()];
    // Every vertex has the same vertex fields: vertex 0 tells.
    if me.num_vertices() == 0 || me.vertex_dofs(0).is_empty() {
        let message = format!("{setting}: this program has no `dof` on vertices, so no vertex can be fixed");
        if from_flag {
            return Err(message);
        }
        warn(&format!("{message}; the setting is dropped"));
        return Ok(mask);
    }
    let nv = me.num_vertices();
    // Each id with the line of the file it was read from.
    let ids: Vec<(usize, Option<usize>)> = match spec {
        FixSpec::Boundary => {
            let ids: Vec<_> = (0..nv).filter(|&i| me.topology().vertex_boundary[i]).map(|i| (i, None)).collect();
            if ids.is_empty() {
                warn(&format!("{setting}: the mesh has no boundary; no vertex is fixed"));
            }
            ids
        }
        FixSpec::Ids(ids) => ids.iter().map(|&i| (i, None)).collect(),
        FixSpec::File(path) => {
            let bytes = std::fs::read(path).map_err(|e| {
                // What was meant as a list of ids gets a message about its ids.
                if e.kind() == std::io::ErrorKind::NotFound
                    && let Some(problem) = id_list_problem(path)
                {
                    return format!("{setting}: {problem}");
                }
                format!(
                    "{setting}: not `boundary` or comma-separated vertex ids, and not a readable \
                     file of ids: {e}"
                )
            })?;
            let text = String::from_utf8(bytes).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
                format!("{setting}: line {line}: not text (invalid UTF-8 at byte {at})")
            })?;
            let mut ids = Vec::new();
            for (line, row) in text.lines().enumerate() {
                let row = row.split('#').next().unwrap_or("");
                for t in row.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()) {
                    let id = t
                        .parse::<usize>()
                        .map_err(|_| format!("{setting}: line {}: `{t}` is not a vertex id", line + 1))?;
                    ids.push((id, Some(line + 1)));
                }
            }
            if ids.is_empty() {
                warn(&format!("{setting}: the file lists no vertex id; no vertex is fixed"));
            }
            ids
        }
    };
    for (i, line) in ids {
        if i >= nv {
            let at = line.map(|l| format!("line {l}: ")).unwrap_or_default();
            return Err(format!(
                "{setting}: {at}fixed vertex {i} is out of range (the mesh has {nv} vertices)"
            ));
        }
        // Ids are the file's; the boundary's are the bound mesh's already.
        let v = match (spec, me.renumbering()) {
            (FixSpec::Boundary, _) | (_, None) => i,
            (_, Some(r)) => r.new_id(i),
        };
        for d in me.vertex_dofs(v) {
            mask[d] = true;
        }
    }
    Ok(mask)
}
