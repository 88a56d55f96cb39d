//! SDK types where every field is an `Option` (Kubernetes' `ObjectMeta` and `PodStatus`, as
//! `k8s-openapi` writes them): an `id` through `?` and a `rank` folded over a list
//! (`rank(desc, max)` of every container's restart count), with no computed field on a
//! wrapper. Checked against a naive reference computed here from the raw values, and read
//! back from what the model reads (the structured data's names, the text's lines).

use toolshape::{Budget, Format, Shaper, ToolResult, fields::KeyValue};

/// `k8s-openapi`'s shapes, cut to the fields the tool reads: every one an `Option`.
#[derive(Clone, Default)]
pub struct ObjectMeta {
    pub uid: Option<String>,
    pub name: Option<String>,
}

#[derive(Clone)]
pub struct ContainerStatus {
    pub restart_count: i32,
}

#[derive(Clone, Default)]
pub struct PodStatus {
    pub phase: Option<String>,
    pub container_statuses: Option<Vec<ContainerStatus>>,
}

/// The SDK's record as the service has it, shaped with `from` paths only.
#[derive(Clone, ToolResult)]
#[shape(
    name = "pod",
    plural = "pods",
    prose = "{name} ({phase}): {restarts} restarts"
)]
pub struct Pod {
    #[shape(from = metadata.uid?, id, rename = "uid")]
    #[shape(from = metadata.name?, rename = "name")]
    pub metadata: ObjectMeta,
    #[shape(from = status?.phase?, rename = "phase")]
    #[shape(
        from = status?.container_statuses?[].restart_count,
        rank(desc, max),
        rename = "restarts"
    )]
    pub status: Option<PodStatus>,
}

/// The same pods ranked by the other folds, to check each against the naive reference.
// Skipped by rustfmt: it indents an attribute inside a macro body further on every run.
#[rustfmt::skip]
macro_rules! folded {
    ($name:ident, $order:ident, $fold:ident) => {
        #[derive(ToolResult)]
        #[shape(name = "pod", plural = "pods")]
        pub struct $name {
            #[shape(from = metadata.uid?, id, rename = "uid")]
            pub metadata: ObjectMeta,
            #[shape(
                from = status?.container_statuses?[].restart_count,
                rank($order, $fold),
                rename = "restarts"
            )]
            pub status: Option<PodStatus>,
        }
    };
}
folded!(BySum, desc, sum);
folded!(ByMin, asc, min);
folded!(ByCount, desc, count);

/// 300 pods: some with no status, some with no container statuses, some
/// with an empty list; restart counts with many ties. `missing` pods (every 37th) have no uid.
fn pods(missing: bool) -> Vec<Pod> {
    (0..300u32)
        .map(|i| {
            let statuses = match i % 11 {
                0 => None,
                1 => Some(Vec::new()),
                n => Some(
                    (0..(n % 4 + 1))
                        .map(|c| ContainerStatus {
                            restart_count: ((i * 7 + c * 13) % 9) as i32,
                        })
                        .collect(),
                ),
            };
            Pod {
                metadata: ObjectMeta {
                    uid: (!missing || i % 37 != 5)
                        .then(|| format!("{:08x}-uid", i.wrapping_mul(2654435761u32))),
                    name: Some(format!("web-{i:03}")),
                },
                status: (i % 13 != 0).then(|| PodStatus {
                    phase: Some(["Running", "Pending", "Failed"][i as usize % 3].into()),
                    container_statuses: statuses,
                }),
            }
        })
        .collect()
}

/// Every restart count a pod's containers have: the naive reading of the raw values.
fn restarts(pod: &Pod) -> Vec<i64> {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map(|c| c.iter().map(|c| i64::from(c.restart_count)).collect())
        .unwrap_or_default()
}

/// The naive order: most restarts first (no container at all ranks last), ties by uid
/// descending (a pod without one after those with one), then as given.
fn expected_order(pods: &[Pod]) -> Vec<String> {
    let mut order: Vec<(Option<i64>, Option<String>, usize)> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| (restarts(p).into_iter().max(), p.metadata.uid.clone(), i))
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    order
        .into_iter()
        .map(|(_, _, i)| pods[i].metadata.name.clone().unwrap())
        .collect()
}

/// Walks `next` to the end at `budget`, returning the pod names each page shows (read from
/// the structured data for JSON, from the text's lines otherwise) and each page's size.
fn walk(pods: &[Pod], budget: usize, format: Format) -> (Vec<String>, Vec<usize>) {
    crate::walk_next("list_pods", pods, budget, format, |page| match format {
        Format::Json => page.structured()["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect(),
        _ => page
            .text()
            .lines()
            .filter_map(|l| {
                let at = l.find("web-")?;
                Some(l[at..at + 7].to_owned())
            })
            .collect(),
    })
}

#[test]
fn an_id_through_an_option_pages_every_pod_once_in_rank_order() {
    for missing in [false, true] {
        let pods = pods(missing);
        let expected = expected_order(&pods);
        for format in [Format::Prose, Format::Table, Format::Json] {
            for budget in [400, 1_000, 5_000] {
                let (seen, sizes) = walk(&pods, budget, format);
                assert_eq!(
                    seen, expected,
                    "missing ids {missing}, {format:?} at {budget}: every pod once, in rank order"
                );
                assert!(
                    sizes.iter().all(|&s| s <= budget),
                    "{format:?} at {budget}: {sizes:?}"
                );
            }
        }
    }
}

// Only a type whose id can be absent has every row's id looked at to choose the paging:
// checked as the suite compiles.
const _: () = assert!(<Pod as ToolResult>::ID_MAY_BE_ABSENT);
const _: () = assert!(!<crate::desk::Ticket as ToolResult>::ID_MAY_BE_ABSENT);

#[test]
fn an_id_through_an_option_reads_as_the_id_or_its_absence() {
    let pods = pods(true);
    let without = pods.iter().find(|p| p.metadata.uid.is_none()).unwrap();
    let with = pods.iter().find(|p| p.metadata.uid.is_some()).unwrap();
    assert_eq!(without.id_key(), None);
    assert_eq!(
        with.id_text(),
        with.metadata.uid.as_deref(),
        "the id is the uid itself"
    );
    let shaped = Shaper::for_tool("list_pods")
        .budget(Budget::tokens(100_000))
        .format(Format::Json)
        .shape_blocking(std::slice::from_ref(without))
        .unwrap();
    let record = &shaped.structured()["data"][0];
    assert_eq!(
        record["uid"],
        serde_json::Value::Null,
        "absent, never guessed"
    );
    assert_eq!(record["name"], "web-005");
    // The schema says the id may be absent.
    let schema = toolshape::schema::envelope::<Pod>().to_value();
    let uid = &schema["else"]["properties"]["data"]["items"]["properties"]["uid"];
    assert!(
        uid.to_string().contains("null"),
        "the uid's schema admits null: {uid}"
    );
}

#[test]
fn every_fold_ranks_as_the_naive_reference_says() {
    let pods = pods(false);
    let key = |values: Vec<i64>, f: fn(Vec<i64>) -> KeyValue| f(values);
    for pod in &pods {
        let values = restarts(pod);
        let max = values
            .iter()
            .copied()
            .max()
            .map_or(KeyValue::Null, KeyValue::Int);
        assert_eq!(pod.rank_key(), Some(max), "{:?}", pod.metadata.name);
        let view = |p: &Pod| BySum {
            metadata: p.metadata.clone(),
            status: p.status.clone(),
        };
        assert_eq!(
            view(pod).rank_key(),
            Some(key(values.clone(), |v| KeyValue::Int(v.iter().sum())))
        );
        let min = ByMin {
            metadata: pod.metadata.clone(),
            status: pod.status.clone(),
        };
        assert_eq!(
            min.rank_key(),
            Some(
                values
                    .iter()
                    .copied()
                    .min()
                    .map_or(KeyValue::Null, KeyValue::Int)
            )
        );
        let count = ByCount {
            metadata: pod.metadata.clone(),
            status: pod.status.clone(),
        };
        assert_eq!(count.rank_key(), Some(KeyValue::Int(values.len() as i64)));
    }
    // The sum pages in its order too: most restarts in all first.
    let by_sum: Vec<BySum> = pods
        .iter()
        .map(|p| BySum {
            metadata: p.metadata.clone(),
            status: p.status.clone(),
        })
        .collect();
    let shaped = Shaper::for_tool("list_pods")
        .budget(Budget::tokens(100_000))
        .format(Format::Json)
        .shape_blocking(&by_sum)
        .unwrap();
    let shown: Vec<i64> = shaped.structured()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["restarts"]
                .as_array()
                .map_or(0, |a| a.iter().map(|v| v.as_i64().unwrap()).sum())
        })
        .collect();
    assert_eq!(shown.len(), 300);
    assert!(shown.windows(2).all(|w| w[0] >= w[1]), "{shown:?}");
}

#[test]
fn sums_stay_exact_past_i64_and_fall_back_to_floats_only_past_u64() {
    use toolshape::__private::rank_sum;
    assert_eq!(rank_sum([1i64, 2, 3].iter()), KeyValue::Int(6));
    assert_eq!(rank_sum(std::iter::empty::<&i32>()), KeyValue::Int(0));
    assert_eq!(
        rank_sum([i64::MAX, 1].iter()),
        KeyValue::UInt(i64::MAX as u64 + 1)
    );
    assert_eq!(rank_sum([i64::MAX, 0].iter()), KeyValue::Int(i64::MAX));
    assert_eq!(rank_sum([u64::MAX, 0].iter()), KeyValue::UInt(u64::MAX));
    assert_eq!(
        rank_sum([u64::MAX, 1].iter()),
        KeyValue::Float(u64::MAX as f64 + 1.0)
    );
    assert_eq!(rank_sum([-5i64, 2].iter()), KeyValue::Int(-3));
    assert_eq!(rank_sum([1.5f64, 2.0].iter()), KeyValue::Float(3.5));
}
