for (const w of [`{"$and":[{"$or":[{"fldA":"valA"},{"fldB":"valB"}]},{"fld2":"val2"}]}`, `ref == a`, `role == agent`]) {
  const g = await api.get(`arbitraryurl?where=${encodeURIComponent(w)}`);
  console.log(w, g.status, g.body._items?.length, g.body._error?.message ?? "");
}
